// Global atomics straight into the histogram (heavy contention when samples share a bin);
// the output is initialised by its own kernel.
__global__ void zero(unsigned* hist, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < bins) hist[i] = 0;
}

__global__ void histogram(const int* samples, unsigned* hist, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[samples[i]], 1);
}
