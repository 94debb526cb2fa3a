// MoE token dispatch: group the 2N assignments s = 2t + k (token t, its k-th expert) by expert.
// `kata grade` compiles this file with NVRTC. The default launch plan starts ONE block of 1024
// threads, which is enough for a first correct version; for speed, split the work into several
// kernels over many blocks (and change launch.py to match).
extern "C" __global__ void moe_dispatch(const int* __restrict__ topk_ids, const float* __restrict__ x,
                                        int* __restrict__ counts, int* __restrict__ offsets,
                                        int* __restrict__ perm, float* __restrict__ gathered,
                                        int N, int E, int D)
{
    // TODO: counts[e] = number of s with topk_ids[s] == e, for every e (experts with none too).
    //       Outputs start poisoned (-1): zero them first, and __syncthreads() between the steps.
    // TODO: offsets[e] = counts[0] + ... + counts[e-1] (exclusive scan; offsets[0] = 0).
    // TODO: perm[offsets[e] + rank] = s, where rank = number of earlier s' (s' < s) with the same
    //       expert: a stable order. atomicAdd hands out places in arrival order, which is not.
    // TODO: gathered[j] = row perm[j] / 2 of x (D floats), for every j.
    (void)topk_ids; (void)x; (void)counts; (void)offsets; (void)perm; (void)gathered;
    (void)N; (void)E; (void)D;
}
