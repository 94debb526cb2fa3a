// Design: four kernels: global atomic counts (thread per assignment), a one-thread scan, one thread per expert walking all assignments in order to write its part of perm, one block per gathered row.
extern "C" __global__ void count(const int* topk_ids, int* counts, int N)
{
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s < 2 * N) atomicAdd(&counts[topk_ids[s]], 1);
}
extern "C" __global__ void scan(const int* counts, int* offsets, int E)
{
    int run = 0;
    for (int e = 0; e < E; e++) { offsets[e] = run; run += counts[e]; }
}
extern "C" __global__ void place(const int* topk_ids, const int* offsets, int* perm, int N, int E)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= E) return;
    int pos = offsets[e];
    for (int s = 0; s < 2 * N; s++)
        if (topk_ids[s] == e) perm[pos++] = s;
}
extern "C" __global__ void gather(const float* x, const int* perm, float* gathered, int D)
{
    int j = blockIdx.x;
    const float* src = x + (long long)(perm[j] / 2) * D;
    for (int d = threadIdx.x; d < D; d += blockDim.x) gathered[(long long)j * D + d] = src[d];
}
