// Harris #1: interleaved addressing with a divergent modulo test, one partial sum per block.
__global__ void reduce_partials(const float* x, float* partial, int n) {
    extern __shared__ float s[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = (i < n) ? x[i] : 0;
    __syncthreads();
    for (unsigned int step = 1; step < blockDim.x; step *= 2) {
        if (tid % (2 * step) == 0) {
            s[tid] += s[tid + step];
        }
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}
