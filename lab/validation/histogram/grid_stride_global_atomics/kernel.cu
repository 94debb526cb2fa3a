// Design: grid-stride loop (a grid the size of the GPU) with one global atomicAdd per sample.
extern "C" __global__ void histogram(const int* samples, unsigned int* counts, int n, int bins)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&counts[samples[i]], 1u);
}
