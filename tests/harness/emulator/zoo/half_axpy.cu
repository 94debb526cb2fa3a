// Half precision: y = a*x + y on __half2 pairs (packed f16x2 FMA), with a scalar __half tail.
#include <cuda_fp16.h>

extern "C" __global__ void haxpy(int n, __half a, const __half* x, __half* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pairs = n / 2;
    if (i < pairs) {
        const __half2* x2 = reinterpret_cast<const __half2*>(x);
        __half2* y2 = reinterpret_cast<__half2*>(y);
        y2[i] = __hfma2(__halves2half2(a, a), x2[i], y2[i]);
    }
    if (i == 0 && (n & 1)) y[n - 1] = __hfma(a, x[n - 1], y[n - 1]);
}

// Half inputs, float math: the usual mixed-precision pattern (convert, compute, round back).
extern "C" __global__ void hscale_relu(const __half* x, __half* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __half2float(x[i]) * s;
        y[i] = __float2half(v > 0.0f ? v : 0.0f);
    }
}
