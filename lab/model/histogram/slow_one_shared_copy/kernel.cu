// Deliberately slower than the solution: one shared-memory copy of the bins per block (every warp
// of the block contends on the hot bins) and scalar loads.
extern "C" __global__ void histogram(const int* __restrict__ samples, unsigned int* __restrict__ counts, int n, int bins)
{
    extern __shared__ unsigned int hist[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) hist[b] = 0u;
    __syncthreads();
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(hist + samples[i], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) {
        if (hist[b]) atomicAdd(counts + b, hist[b]);
    }
}
