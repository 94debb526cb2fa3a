// kata-expect: out-of-bounds
// The private histogram is sized for 256 bins; with up to 4096 bins the shared-memory copy must be sized from bins at launch time.
#define THREADS 512

extern "C" __global__ void __launch_bounds__(THREADS)
histogram(const int* __restrict__ samples, unsigned int* __restrict__ counts, int n, int bins, int copies)
{
    __shared__ unsigned int hist[256];
    (void)copies;
    for (int i = threadIdx.x; i < bins; i += THREADS) hist[i] = 0u;
    __syncthreads();
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n; i += gridDim.x * THREADS) {
        atomicAdd(hist + samples[i], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += THREADS) {
        if (hist[b] != 0u) atomicAdd(counts + b, hist[b]);
    }
}
// full file: a design of its own (a fixed 256-bin shared array) that the solution, sized from the bin count, never had.
