// Design: one thread per sample, one global atomicAdd per sample into counts.
extern "C" __global__ void histogram(const int* samples, unsigned int* counts, int n, int bins)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&counts[samples[i]], 1u);
}
