// Deliberately slow: one global atomicAdd per element. Every thread of the GPU queues on the same
// address, so the L2's atomic unit serialises n additions: correct, and far from the roofline.
// The accumulator is a double: n float32 additions in sequence lose the low digits of each addend
// once the sum is large (at n = 2^28 a float32 running sum ends 28 % low), so this variant is
// slow but still within the kata's tolerance.
extern "C" __global__ void accumulate(const float* __restrict__ x, double* __restrict__ acc, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(acc, (double)x[i]);
    }
}

extern "C" __global__ void finish(const double* __restrict__ acc, float* __restrict__ out)
{
    out[0] = (float)acc[0];
}
