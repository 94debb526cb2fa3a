// Reduction ladder 1: interleaved addressing with a divergent modulo. One element per thread; at
// stride s only threads whose id is a multiple of 2s add, so every warp stays busy (divergent)
// while most of its lanes idle, and the modulo is an integer division per step.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (t % (2 * stride) == 0) {
            s[t] += s[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(out, s[0]);
    }
}
