// Deliberately slow: one global atomic per sample. Hot bins serialise at the L2's atomic unit
// across the whole GPU.
extern "C" __global__ void histogram(const int* __restrict__ samples, unsigned int* __restrict__ counts, int n, int bins)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        atomicAdd(counts + samples[i], 1u);
    }
}
