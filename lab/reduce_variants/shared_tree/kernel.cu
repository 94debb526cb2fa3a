// The textbook shared-memory tree: one element per thread, log2(256) barrier-separated halving
// steps, one atomic per block. Coalesced and correct, but 4-byte loads, a block per 256 elements
// (a million blocks at 2^28) and eight barriers per block keep it well below the bandwidth.
// The block sums go into a double: a million float atomicAdds into one float lose about
// sqrt(blocks / 3) eps32 of the sum (~580 eps at 2^28), past the kata's 2 eps32 log2(n) bound on
// some schedules (the H200 rejected one timed run of a float version as wrong after timing).
extern "C" __global__ void reduce(const float* __restrict__ x, double* __restrict__ acc, int n)
{
    __shared__ float s[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            s[threadIdx.x] += s[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(acc, (double)s[0]);
    }
}

extern "C" __global__ void finish(const double* __restrict__ acc, float* __restrict__ out)
{
    out[0] = (float)acc[0];
}
