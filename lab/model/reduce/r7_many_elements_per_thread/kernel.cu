// Reduction ladder 7: many elements per thread. A grid the size of the GPU; each thread adds a
// grid-stride run of scalar loads (unrolled by four, so four loads are in flight), then the fully
// unrolled tree: the block-level work and the atomic are paid once per ~1000 elements.
#define THREADS 256

extern "C" __global__ void __launch_bounds__(THREADS) reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[THREADS];
    const unsigned t = threadIdx.x;
    const int stride = gridDim.x * THREADS;
    int i = blockIdx.x * THREADS + t;
    float v = 0.0f;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const float a = x[i], b = x[i + stride], c = x[i + 2 * stride], d = x[i + 3 * stride];
        v += (a + b) + (c + d);
    }
    for (; i < n; i += stride) {
        v += x[i];
    }
    s[t] = v;
    __syncthreads();
    if (t < 128) { s[t] += s[t + 128]; }
    __syncthreads();
    if (t < 64) { s[t] += s[t + 64]; }
    __syncthreads();
    if (t < 32) {
        v = s[t] + s[t + 32];
        v += __shfl_down_sync(0xffffffffu, v, 16);
        v += __shfl_down_sync(0xffffffffu, v, 8);
        v += __shfl_down_sync(0xffffffffu, v, 4);
        v += __shfl_down_sync(0xffffffffu, v, 2);
        v += __shfl_down_sync(0xffffffffu, v, 1);
        if (t == 0) {
            atomicAdd(out, v);
        }
    }
}
