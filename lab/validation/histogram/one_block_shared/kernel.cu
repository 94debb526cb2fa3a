// Design: a single block of 1024 threads loops over every sample into one shared histogram, then writes counts.
extern "C" __global__ void histogram(const int* samples, unsigned int* counts, int n, int bins)
{
    extern __shared__ unsigned int local[];
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&local[samples[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x) counts[b] = local[b];
}
