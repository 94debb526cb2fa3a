// Pointwise kernels of a transformer: GELU forward and backward (tanh form), residual add in packed
// 16-byte floatX vectors, bf16x2 arithmetic, all grid-stride.
#include "common.cuh"
#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

__global__ void gelu_forward_kernel(float* out, const float* inp, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
        float x = inp[i], cube = 0.044715f * x * x * x;
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x + cube)));
    }
}

__global__ void gelu_backward_kernel(float* dinp, const float* inp, const float* dout, const int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float x = inp[i], cube = 0.044715f * x * x * x;
        float tanh_arg = GELU_SCALING_FACTOR * (x + cube), tanh_out = tanhf(tanh_arg);
        float cosh_out = coshf(tanh_arg), sech_out = 1.0f / (cosh_out * cosh_out);
        float local_grad = 0.5f * (1.0f + tanh_out) + x * 0.5f * sech_out * GELU_SCALING_FACTOR * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] = local_grad * dout[i];
    }
}

template <class T>
__global__ void residual_forward_kernel(T* out, const T* inp1, const T* inp2, int N) {
    int idx = (blockIdx.x * blockDim.x + threadIdx.x) * Pack16<T>::size;
    if (idx >= N) return;
    Pack16<T> a = load16_cs(inp1 + idx), b = load16_cs(inp2 + idx), o;
    for (int k = 0; k < Pack16<T>::size; k++) o[k] = (T)((float)a[k] + (float)b[k]);
    store16(out + idx, o);
}
template __global__ void residual_forward_kernel<float>(float*, const float*, const float*, int);
template __global__ void residual_forward_kernel<__nv_bfloat16>(__nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, int);

// bias + GELU on bf16 pairs: __nv_bfloat162 loads, float math, __floats2bfloat162_rn stores
__global__ void bias_gelu_bf16x2(__nv_bfloat16* out, const __nv_bfloat16* inp, const __nv_bfloat16* bias, int rows, int C) {
    int pairs = rows * C / 2;
    const __nv_bfloat162* in2 = reinterpret_cast<const __nv_bfloat162*>(inp);
    const __nv_bfloat162* b2 = reinterpret_cast<const __nv_bfloat162*>(bias);
    __nv_bfloat162* out2 = reinterpret_cast<__nv_bfloat162*>(out);
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += gridDim.x * blockDim.x) {
        float2 x = __bfloat1622float2(__hadd2(in2[p], b2[p % (C / 2)]));
        float g0 = 0.5f * x.x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x.x + 0.044715f * x.x * x.x * x.x)));
        float g1 = 0.5f * x.y * (1.0f + tanhf(GELU_SCALING_FACTOR * (x.y + 0.044715f * x.y * x.y * x.y)));
        out2[p] = __floats2bfloat162_rn(g0, g1);
    }
}
