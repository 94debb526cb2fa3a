// Hillis-Steele inclusive scan per block (double-buffered), block totals, then a uniform add.
// int32 arithmetic wraps like the hardware's add.s32.
#define BLOCK 256

extern "C" __global__ void scan_blocks(const int* in, int* out, int* block_sums, int n) {
    __shared__ int buf[2][BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    int pout = 0, pin = 1;
    buf[pout][tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset)
            buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
        else
            buf[pout][tid] = buf[pin][tid];
        __syncthreads();
    }
    if (i < n) out[i] = buf[pout][tid];
    if (tid == BLOCK - 1 && block_sums) block_sums[blockIdx.x] = buf[pout][tid];
}

extern "C" __global__ void add_offsets(int* out, const int* scanned_sums, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}
