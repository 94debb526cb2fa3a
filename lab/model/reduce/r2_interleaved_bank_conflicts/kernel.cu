// Reduction ladder 2: interleaved addressing with a strided index. The first threads of each
// step do the adds (no divergence inside the active warps), but thread t touches s[2*stride*t]:
// lanes of a warp land in the same bank (2-, 4-, ... 32-way conflicts).
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        const unsigned index = 2 * stride * t;
        if (index < blockDim.x) {
            s[index] += s[index + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(out, s[0]);
    }
}
