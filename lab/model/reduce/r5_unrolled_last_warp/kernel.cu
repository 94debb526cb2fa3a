// Reduction ladder 5: the last warp unrolled. Barrier steps stop at 64 partial sums; one warp
// finishes with five shuffle steps (the modern, race-free form of the volatile warp-synchronous
// tail): five barriers fewer per block.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    const int i = blockIdx.x * (2 * blockDim.x) + t;
    float v = i < n ? x[i] : 0.0f;
    if (i + blockDim.x < n) {
        v += x[i + blockDim.x];
    }
    s[t] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (t < stride) {
            s[t] += s[t + stride];
        }
        __syncthreads();
    }
    if (t < 32) {
        v = s[t] + s[t + 32];
        for (int offset = 16; offset > 0; offset >>= 1) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
        if (t == 0) {
            atomicAdd(out, v);
        }
    }
}
