// Design: everything in one block of 1024 threads: shared-atomic counts, thread 0 scans the offsets and places the assignments in order, then the block copies every gathered row.
extern "C" __global__ void moe_dispatch(const int* topk_ids, const float* x, int* counts, int* offsets, int* perm,
                                        float* gathered, int N, int E, int D)
{
    __shared__ int cnt[1024], cursor[1024];
    for (int e = threadIdx.x; e < E; e += blockDim.x) cnt[e] = 0;
    __syncthreads();
    for (int s = threadIdx.x; s < 2 * N; s += blockDim.x) atomicAdd(&cnt[topk_ids[s]], 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        int run = 0;
        for (int e = 0; e < E; e++) { cursor[e] = run; offsets[e] = run; counts[e] = cnt[e]; run += cnt[e]; }
        for (int s = 0; s < 2 * N; s++) perm[cursor[topk_ids[s]]++] = s;
    }
    __syncthreads();
    for (long long idx = threadIdx.x; idx < 2LL * N * D; idx += blockDim.x) {
        long long j = idx / D, d = idx % D;
        gathered[idx] = x[(long long)(perm[j] / 2) * D + d];
    }
}
