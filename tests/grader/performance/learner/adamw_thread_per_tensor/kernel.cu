// A learner's first adamw: one thread per tensor, walking its tensor alone (4.3 s on the H200:
// the thread that owns a 16M-element tensor sets the time, one dependent step at a time).
extern "C" __global__ void adamw(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                                 float* __restrict__ v, const long long* __restrict__ offsets,
                                 const long long* __restrict__ sizes, const float* __restrict__ wd,
                                 int T, long long N, float lr, float beta1, float beta2, float eps, int t)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= T) return;
    const float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    const long long start = offsets[i], size = sizes[i];
    for (long long e = start; e < start + size; ++e) {
        const float gi = g[e];
        const float mi = beta1 * m[e] + (1.0f - beta1) * gi;
        const float vi = beta2 * v[e] + (1.0f - beta2) * gi * gi;
        m[e] = mi;
        v[e] = vi;
        p[e] = p[e] * (1.0f - lr * wd[i]) - (lr / c1) * mi / (sqrtf(vi / c2) + eps);
    }
}
