// Deliberately slow: one block of 128 threads per SM and a grid-stride loop the compiler may not
// unroll, so each warp has one 4-byte load in flight: 4 warps x 128 B per SM cannot cover the
// memory latency (Little's law wants ~20 KB in flight per SM).
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int stride = gridDim.x * blockDim.x;
    float v = 0.0f;
#pragma unroll 1
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        v += x[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, v);
    }
}
