// kata-expect: uninitialized-read
// Shared memory starts with garbage in every block; the private bins are counted into without being zeroed first.
#define THREADS 512
#define WARPS (THREADS / 32)

extern "C" __global__ void __launch_bounds__(THREADS)
histogram(const int* __restrict__ samples, unsigned int* __restrict__ counts, int n, int bins, int copies)
{
    extern __shared__ unsigned int hist[];  // copies x bins, from the plan's dynamic shared size

    // Warps share a copy round-robin; copies divides WARPS, so every copy serves as many warps.
    unsigned int* h = hist + ((threadIdx.x >> 5) % copies) * bins;

    // int4 loads: 512 contiguous bytes per warp instruction. Allocations are 256-byte aligned.
    const int stride = gridDim.x * THREADS;
    const int n4 = n >> 2;
    const int4* s4 = reinterpret_cast<const int4*>(samples);
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < n4; i += stride) {
        const int4 v = __ldg(s4 + i);
        atomicAdd(h + v.x, 1u);
        atomicAdd(h + v.y, 1u);
        atomicAdd(h + v.z, 1u);
        atomicAdd(h + v.w, 1u);
    }
    // The n % 4 samples the vector loop cannot reach.
    for (int i = 4 * n4 + blockIdx.x * THREADS + threadIdx.x; i < n; i += stride) {
        atomicAdd(h + __ldg(samples + i), 1u);
    }
    __syncthreads();

    // Merge the copies and flush: one global atomic per non-zero bin per block.
    for (int b = threadIdx.x; b < bins; b += THREADS) {
        unsigned int c = 0u;
        for (int k = 0; k < copies; ++k) c += hist[k * bins + b];
        if (c != 0u) atomicAdd(counts + b, c);
    }
}
