// Design: one thread per tensor looping over all its parameters (the largest tensor is one thread's serial loop).
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
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= T) return;
    float bc1 = 1.0f - powf(beta1, (float)t), bc2 = 1.0f - powf(beta2, (float)t);
    long long start = offsets[i], size = sizes[i];
    for (long long e = 0; e < size; e++)
        step(p, g, m, v, start + e, wd[i], lr, beta1, beta2, eps, bc1, bc2);
}
