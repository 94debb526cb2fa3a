// Bandwidth-bound design: 16-byte float4 loads in a grid-stride loop (a GPU-sized grid, long
// private sums), then five warp shuffles and one atomic per warp. No shared memory, no barrier.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    const int stride = gridDim.x * blockDim.x;
    const int n4 = n >> 2;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float a = 0.0f, b = 0.0f;
    int i = tid;
    // Two loads in flight per iteration: more bytes outstanding per thread hides HBM latency.
    for (; i + stride < n4; i += 2 * stride) {
        const float4 u = x4[i];
        const float4 v = x4[i + stride];
        a += (u.x + u.y) + (u.z + u.w);
        b += (v.x + v.y) + (v.z + v.w);
    }
    if (i < n4) {
        const float4 u = x4[i];
        a += (u.x + u.y) + (u.z + u.w);
    }
    for (int j = 4 * n4 + tid; j < n; j += stride) {
        a += x[j];
    }
    float sum = a + b;
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(out, sum);
    }
}
