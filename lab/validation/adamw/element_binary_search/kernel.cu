// Design: one thread per arena element; a binary search over the offsets finds its tensor (padding elements are skipped).
__device__ void step(float* p, const float* g, float* m, float* v, long long e, float decay, float lr, float beta1, float beta2, float eps, float bc1, float bc2)
{
    float gi = g[e];
    float mi = beta1 * m[e] + (1.0f - beta1) * gi;
    float vi = beta2 * v[e] + (1.0f - beta2) * gi * gi;
    m[e] = mi;
    v[e] = vi;
    p[e] = p[e] * (1.0f - lr * decay) - (lr / bc1) * mi / (sqrtf(vi / bc2) + eps);
}
extern "C" __global__ void adamw(float* p, const float* g, float* m, float* v, const long long* offsets, const long long* sizes, const float* wd, int T, long long N, float lr, float beta1, float beta2, float eps, int t)
{
    long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= N) return;
    int lo = 0, hi = T - 1;  // the last tensor whose offset is <= e
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (offsets[mid] <= e) lo = mid; else hi = mid - 1;
    }
    if (e < offsets[lo] || e >= offsets[lo] + sizes[lo]) return;  // padding
    float bc1 = 1.0f - powf(beta1, (float)t), bc2 = 1.0f - powf(beta2, (float)t);
    step(p, g, m, v, e, wd[lo], lr, beta1, beta2, eps, bc1, bc2);
}
