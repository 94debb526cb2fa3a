// Design: one thread per sample, a shared-memory histogram per 256-thread block, merged into counts with one global atomic per non-zero bin.
extern "C" __global__ void histogram(const int* samples, unsigned int* counts, int n, int bins)
{
    extern __shared__ unsigned int local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&local[samples[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
        if (local[b]) atomicAdd(&counts[b], local[b]);
}
