// The rest of a GPT training step: token+position encoder forward/backward, fused classifier
// (softmax + cross-entropy forward, gradient of the logits), and AdamW with fp32 master weights.
#include "common.cuh"

// encoder forward: out[b,t,:] = wte[token] + wpe[t], moved in 16-byte packs
__global__ void encoder_forward_kernel3(float* out, const int* inp, const float* wte, const float* wpe, int B, int T, int C) {
    constexpr int P = Pack16<float>::size;
    int idx = (blockIdx.x * blockDim.x + threadIdx.x) * P;
    if (idx >= B * T * C) return;
    int bt = idx / C, t = bt % T, c = idx % C;
    int ix = inp[bt];
    Pack16<float> a = load16(wte + ix * C + c), b = load16(wpe + t * C + c), o;
    for (int k = 0; k < P; k++) o[k] = a[k] + b[k];
    store16(out + idx, o);
}

// encoder backward: scatter-add into the embedding tables (repeated tokens collide: atomics)
__global__ void encoder_backward_kernel(float* dwte, float* dwpe, const float* dout, const int* inp, int B, int T, int C) {
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < B * T * C; idx += gridDim.x * blockDim.x) {
        int bt = idx / C, t = bt % T, c = idx % C;
        float d = dout[idx];
        atomicAdd(&dwte[inp[bt] * C + c], d);
        atomicAdd(&dwpe[t * C + c], d);
    }
}

// softmax + cross-entropy: a block per row, block_sum from common.cuh, loss by thread 0
__global__ void fused_classifier_kernel(float* losses, float* dlogits, const float* logits, const int* targets, int N, int V) {
    int row = blockIdx.x;
    const float* x = logits + (size_t)row * V;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < V; i += blockDim.x) m = fmaxf(m, x[i]);
    __shared__ float red[WARP_SIZE];
    m = warp_max(m);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
    __syncthreads();
    m = threadIdx.x % 32 < blockDim.x / 32 ? red[threadIdx.x % 32] : -INFINITY;  // every warp folds all
    m = warp_max(m);
    float s = 0.0f;
    for (int i = threadIdx.x; i < V; i += blockDim.x) s += expf(x[i] - m);
    s = block_sum(s);
    int target = targets[row];
    if (threadIdx.x == 0) losses[row] = -(x[target] - m - logf(s));
    for (int i = threadIdx.x; i < V; i += blockDim.x) {
        float p = expf(x[i] - m) / s;
        __stcs(dlogits + (size_t)row * V + i, (p - (i == target ? 1.0f : 0.0f)) / N);
    }
}

__device__ inline float lerp(float start, float end, float weight) { return fma(weight, end, fma(-weight, start, start)); }

// AdamW: fp32 master weights and moments, bf16 copy of the parameters for the forward pass
template <class Tp>
__global__ void adamw_kernel2(Tp* params, float* master, const float* grads, float* m, float* v, size_t n,
                              float lr, float beta1, float beta2, float b1c, float b2c, float eps, float wd) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        float g = grads[i];
        float mi = lerp(g, m[i], beta1), vi = lerp(g * g, v[i], beta2);
        m[i] = mi; v[i] = vi;
        float p = master[i];
        p -= lr * ((mi / b1c) / (sqrtf(vi / b2c) + eps) + wd * p);
        master[i] = p;
        params[i] = (Tp)p;
    }
}
template __global__ void adamw_kernel2<float>(float*, float*, const float*, float*, float*, size_t, float, float, float, float, float, float, float);
template __global__ void adamw_kernel2<__nv_bfloat16>(__nv_bfloat16*, float*, const float*, float*, float*, size_t, float, float, float, float, float, float, float);
