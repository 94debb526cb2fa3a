// Design: 1024-element tiles: a shuffle scan inside each warp, the warp totals scanned by warp 0 through shared memory, recursive tile totals.
#define BLOCK 1024
extern "C" __global__ void scan_tiles(const int* x, int* y, int* sums, int n)
{
    __shared__ unsigned int warp_tot[32];
    int i = blockIdx.x * BLOCK + threadIdx.x, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    unsigned int v = i < n ? (unsigned int)x[i] : 0u;
    for (int o = 1; o < 32; o *= 2) { unsigned int u = __shfl_up_sync(0xffffffff, v, o); if (lane >= o) v += u; }
    if (lane == 31) warp_tot[w] = v;
    __syncthreads();
    if (w == 0) {
        unsigned int t = warp_tot[lane];
        for (int o = 1; o < 32; o *= 2) { unsigned int u = __shfl_up_sync(0xffffffff, t, o); if (lane >= o) t += u; }
        warp_tot[lane] = t;
    }
    __syncthreads();
    if (w > 0) v += warp_tot[w - 1];
    if (i < n) y[i] = (int)v;
    if (threadIdx.x == BLOCK - 1) sums[blockIdx.x] = (int)v;
}
extern "C" __global__ void add_offsets(int* y, const int* sums, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x > 0 && i < n) y[i] = (int)((unsigned int)y[i] + (unsigned int)sums[blockIdx.x - 1]);
}
