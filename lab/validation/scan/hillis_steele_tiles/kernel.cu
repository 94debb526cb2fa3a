// Design: Hillis-Steele scan of 256-element tiles in double-buffered shared memory, the tile totals scanned recursively, then offsets added.
#define BLOCK 256
extern "C" __global__ void scan_tiles(const int* x, int* y, int* sums, int n)
{
    __shared__ unsigned int buf[2][BLOCK];
    int i = blockIdx.x * BLOCK + threadIdx.x;
    int cur = 0;
    buf[0][threadIdx.x] = i < n ? (unsigned int)x[i] : 0u;
    __syncthreads();
    for (int off = 1; off < BLOCK; off *= 2) {
        unsigned int v = buf[cur][threadIdx.x];
        if (threadIdx.x >= off) v += buf[cur][threadIdx.x - off];
        buf[1 - cur][threadIdx.x] = v;
        cur = 1 - cur;
        __syncthreads();
    }
    if (i < n) y[i] = (int)buf[cur][threadIdx.x];
    if (threadIdx.x == BLOCK - 1) sums[blockIdx.x] = (int)buf[cur][threadIdx.x];
}
extern "C" __global__ void add_offsets(int* y, const int* sums, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x > 0 && i < n) y[i] = (int)((unsigned int)y[i] + (unsigned int)sums[blockIdx.x - 1]);
}
