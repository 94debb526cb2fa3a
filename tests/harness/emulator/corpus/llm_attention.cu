// Causal self-attention the unfused way: permute the fused qkv tensor to (B, NH, T, HS), scores
// q.k / sqrt(HS) with the causal mask, a row softmax, the weighted sum of values, and unpermute.
#include "common.cuh"

__global__ void permute_kernel(float* q, float* k, float* v, const float* inp, int B, int N, int NH, int d) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;  // over (b, nh, n, d) of q
    if (idx < B * NH * N * d) {
        int b = idx / (NH * N * d), rest = idx % (NH * N * d);
        int nh_ = rest / (N * d); rest = rest % (N * d);
        int n = rest / d, d_ = rest % d;
        int inp_idx = b * N * 3 * NH * d + n * 3 * NH * d + 0 * NH * d + nh_ * d + d_;
        q[idx] = __ldcs(&inp[inp_idx]);
        k[idx] = __ldcs(&inp[inp_idx + NH * d]);
        v[idx] = __ldcs(&inp[inp_idx + 2 * (NH * d)]);
    }
}

__global__ void attention_query_key_kernel1(float* preatt, const float* q, const float* k, int B, int T, int NH, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int total = B * NH * T * T;
    if (idx < total) {
        int t2 = idx % T, t = (idx / T) % T;
        if (t2 > t) { preatt[idx] = -INFINITY; return; }  // the causal mask
        int bh = idx / (T * T);
        const float* qt = q + (bh * T + t) * HS;
        const float* kt = k + (bh * T + t2) * HS;
        float val = 0.0f;
        for (int i = 0; i < HS; i++) val += qt[i] * kt[i];
        preatt[idx] = val * (1.0f / sqrtf((float)HS));
    }
}

__global__ void attention_softmax_kernel1(float* att, const float* preatt, int B, int T, int NH) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * T * NH) {
        int t = idx % T;
        const float* row = preatt + idx * T;
        float* out = att + idx * T;
        float maxval = -INFINITY;
        for (int t2 = 0; t2 <= t; t2++) maxval = fmaxf(maxval, row[t2]);
        float sum = 0.0f;
        for (int t2 = 0; t2 <= t; t2++) { float e = expf(row[t2] - maxval); sum += e; out[t2] = e; }
        float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
        for (int t2 = 0; t2 < T; t2++) out[t2] = t2 <= t ? out[t2] * inv : 0.0f;
    }
}

__global__ void attention_value_kernel1(float* out, const float* att, const float* v, int B, int T, int NH, int HS) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;  // over (b, nh, t)
    if (idx < B * NH * T) {
        int t = idx % T;
        const float* a = att + idx * T;
        const float* vb = v + (idx / T) * T * HS;
        float* o = out + idx * HS;
        for (int i = 0; i < HS; i++) o[i] = 0.0f;
        for (int t2 = 0; t2 <= t; t2++)
            for (int i = 0; i < HS; i++) o[i] += a[t2] * vb[t2 * HS + i];
    }
}

__global__ void unpermute_kernel(const float* inp, float* out, int B, int N, int NH, int d) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;  // (B, NH, N, d) -> (B, N, NH, d)
    if (idx < B * NH * N * d) {
        int b = idx / (NH * N * d), rest = idx % (NH * N * d);
        int nh_ = rest / (N * d); rest = rest % (N * d);
        int n = rest / d, d_ = rest % d;
        out[b * N * NH * d + n * NH * d + nh_ * d + d_] = __ldcs(&inp[idx]);
    }
}
