// MoE token dispatch: group the 2N assignments s = 2t + k (token t, its k-th expert) by expert.
// `kata grade` compiles this file with NVRTC. The default launch plan starts ONE thread, so this
// stub may be written as plain serial code first; make it parallel (several kernels) for speed.
extern "C" __global__ void moe_dispatch(const int* __restrict__ topk_ids, const float* __restrict__ x,
                                        int* __restrict__ counts, int* __restrict__ offsets,
                                        int* __restrict__ perm, float* __restrict__ gathered,
                                        int N, int E, int D)
{
    // TODO: counts[e] = number of s with topk_ids[s] == e (every e, including experts with none).
    // TODO: offsets[e] = counts[0] + ... + counts[e-1] (exclusive scan; offsets[0] = 0).
    // TODO: perm: the s of expert 0 in increasing order, then expert 1's, ...; a stable order, so
    //       the place of s is offsets[e] + (number of earlier s' with the same expert).
    // TODO: gathered[j] = row perm[j] / 2 of x (D floats).
    (void)topk_ids; (void)x; (void)counts; (void)offsets; (void)perm; (void)gathered;
    (void)N; (void)E; (void)D;
}
