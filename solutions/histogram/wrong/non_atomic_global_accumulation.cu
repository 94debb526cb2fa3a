// kata-expect: wrong-answer
// counts[b] += 1 is a load, an add and a store: threads that hit the same bin at once all read the same old count and lose each other's increments.
extern "C" __global__ void histogram(const int* __restrict__ samples, unsigned int* __restrict__ counts,
                                     int n, int bins, int copies)
{
    (void)bins; (void)copies;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        counts[samples[i]] += 1u;
    }
}
// full file: the naive global-memory histogram, one increment per element, which is the mistake's setting; the solution privatises bins in shared memory.
