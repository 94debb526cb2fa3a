// bf16 dot product accumulated in float: bf16 loads, conversions, a warp shuffle and an atomic.
#include <cuda_bf16.h>

extern "C" __global__ void dot(const __nv_bfloat16* a, const __nv_bfloat16* b, float* out, int n) {
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += __bfloat162float(a[i]) * __bfloat162float(b[i]);
    for (int off = 16; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffff, sum, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, sum);
}

// Round float to bf16 and back, and a packed bf16x2 add.
extern "C" __global__ void round_trip(const float* x, __nv_bfloat16* y, __nv_bfloat162* pair_sum, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2bfloat16(x[i]);
    if (i < n / 2) {
        __nv_bfloat162 p = __floats2bfloat162_rn(x[2 * i], x[2 * i + 1]);
        pair_sum[i] = __hadd2(p, p);
    }
}
