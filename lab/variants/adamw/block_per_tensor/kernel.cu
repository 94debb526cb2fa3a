// One AdamW step over T float32 tensors. Tensor i is p[offsets[i] .. offsets[i] + sizes[i]) of the
// arena (likewise g, m, v); the elements between tensors are padding and must not change.
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g * g
//   p = p * (1 - lr * wd[i]) - (lr / (1 - beta1^t)) * m / (sqrt(v / (1 - beta2^t)) + eps)
// Variant: the stub's plan (one block per tensor) filled in the obvious way, with powf bias
// corrections per thread. Correct; on a GPU it shows the load-imbalance trap's cost.
extern "C" __global__ void adamw(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                                 float* __restrict__ v, const long long* __restrict__ offsets,
                                 const long long* __restrict__ sizes, const float* __restrict__ wd,
                                 int T, long long N, float lr, float beta1, float beta2, float eps, int t)
{
    const int i = blockIdx.x;  // this block's tensor
    if (i >= T) return;
    const long long start = offsets[i], size = sizes[i];

    const float bc1 = 1.0f - powf(beta1, (float)t), bc2 = 1.0f - powf(beta2, (float)t);
    const float decay = 1.0f - lr * wd[i];
    for (long long e = threadIdx.x; e < size; e += blockDim.x) {
        const long long k = start + e;
        const float mm = beta1 * m[k] + (1.0f - beta1) * g[k];
        const float vv = beta2 * v[k] + (1.0f - beta2) * g[k] * g[k];
        m[k] = mm;
        v[k] = vv;
        p[k] = p[k] * decay - (lr / bc1) * mm / (sqrtf(vv / bc2) + eps);
    }
    (void)N;
}
