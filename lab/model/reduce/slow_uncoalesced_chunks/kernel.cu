// Deliberately slow: each thread sums its own contiguous chunk of x. Lanes of a warp read
// addresses a chunk apart, so every load request touches 32 sectors for 32 useful floats, and
// the L1 has to hold each lane's sector until the lane's next 7 loads use it.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int threads = gridDim.x * blockDim.x;
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    const int chunk = (n + threads - 1) / threads;
    const int begin = t * chunk;
    const int end = min(n, begin + chunk);
    float v = 0.0f;
    for (int i = begin; i < end; ++i) {
        v += x[i];
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, v);
    }
}
