// Design: counts by global atomics, a one-thread scan, each assignment's place found by counting the earlier assignments to its expert (a loop over all before it), then one thread per gathered element.
extern "C" __global__ void count(const int* topk_ids, int* counts, int N)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < 2 * N) atomicAdd(&counts[topk_ids[s]], 1);
}
extern "C" __global__ void scan(const int* counts, int* offsets, int E)
{
    if (threadIdx.x != 0) return;
    int run = 0;
    for (int e = 0; e < E; e++) { offsets[e] = run; run += counts[e]; }
}
extern "C" __global__ void rank(const int* topk_ids, const int* offsets, int* perm, int N)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= 2 * N) return;
    int e = topk_ids[s], before = 0;
    for (int q = 0; q < s; q++) before += topk_ids[q] == e;
    perm[offsets[e] + before] = s;
}
extern "C" __global__ void gather(const float* x, const int* perm, float* gathered, int N, int D)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= 2LL * N * D) return;
    long long j = idx / D, d = idx % D;
    gathered[idx] = x[(long long)(perm[j] / 2) * D + d];
}
