// Deliberately slow: one global atomicAdd per element. Every thread of the GPU queues on the same
// address, so the L2's atomic unit serialises n additions: correct, and far from the roofline.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(out, x[i]);
    }
}
