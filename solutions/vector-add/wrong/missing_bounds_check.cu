// kata-expect: out-of-bounds
// One thread per element with the grid rounded up to whole blocks, and no i < n check: the last block reads and writes past the end.
extern "C" __global__ void vector_add(const float* __restrict__ a, const float* __restrict__ b,
                                      float* __restrict__ c, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
// full file: the first kernel everyone writes (one thread per element, no grid-stride loop, no float4) is where this bug lives; the solution's float4 grid-stride loop has no such line.
