// Design: one 1024-thread block per row, no sort: bisection over the logit values (block-wide sums of the probabilities at or above a value) finds the nucleus's last logit, then the sampled logit, then the tied index.
#define THREADS 1024
__device__ float block_sum(float v, float* scratch)
{
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffff, v, o);
    __syncthreads();  // scratch is free again
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    float t = 0.0f;
    for (int w = 0; w < THREADS / 32; w++) t += scratch[w];
    return t;
}
__device__ float block_max(float v, float* scratch)
{
    for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    __syncthreads();
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = v;
    __syncthreads();
    float t = scratch[0];
    for (int w = 1; w < THREADS / 32; w++) t = fmaxf(t, scratch[w]);
    return t;
}
__device__ unsigned int key_of(float f)
{
    unsigned int u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ float float_of(unsigned int k)
{
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
// the mass of the tokens whose logit is >= v (strict: > v)
__device__ float mass(const float* x, int V, float v, bool strict, float mx, float T, float Z, float* scratch)
{
    float s = 0.0f;
    for (int i = threadIdx.x; i < V; i += THREADS)
        if (strict ? x[i] > v : x[i] >= v) s += expf((x[i] - mx) / T);
    return block_sum(s, scratch) / Z;
}
// the largest finite logit value v with mass(>= v) >= target (or > target when above)
__device__ float last_value(const float* x, int V, float target, bool above, float mx, float T, float Z, float* scratch)
{
    unsigned int lo = key_of(-3.4028235e38f), hi = key_of(mx);
    while (lo < hi) {
        unsigned int mid = lo + (hi - lo + 1) / 2;
        float mm = mass(x, V, float_of(mid), false, mx, T, Z, scratch);
        if (above ? mm > target : mm >= target) lo = mid; else hi = mid - 1;
    }
    return float_of(lo);
}
extern "C" __global__ void top_p_sample(const float* logits, const float* temperature, const float* top_p,
                                        const float* uniform, int* token, int V)
{
    __shared__ float scratch[THREADS / 32];
    int r = blockIdx.x;
    const float* x = logits + (size_t)r * V;
    float T = temperature[r], p = top_p[r], u = uniform[r];
    float mx = -3.4028235e38f;
    for (int i = threadIdx.x; i < V; i += THREADS) mx = fmaxf(mx, x[i]);
    mx = block_max(mx, scratch);
    float Z = 0.0f;
    for (int i = threadIdx.x; i < V; i += THREADS) Z += expf((x[i] - mx) / T);
    Z = block_sum(Z, scratch);
    float total = mass(x, V, -3.4028235e38f, false, mx, T, Z, scratch);
    // the nucleus: tau is the logit of its last token, t how many of tau's ties it takes
    float tau, cK;
    int take = V;
    if (total < p) {
        tau = -3.4028235e38f;
        cK = total;
    } else {
        tau = last_value(x, V, p, false, mx, T, Z, scratch);
        float above = mass(x, V, tau, true, mx, T, Z, scratch);
        float pt = expf((tau - mx) / T) / Z;
        take = (int)ceilf((p - above) / pt);
        float ties = 0.0f;
        for (int i = threadIdx.x; i < V; i += THREADS) ties += x[i] == tau ? 1.0f : 0.0f;
        int n_tau = (int)block_sum(ties, scratch);
        take = max(1, min(take, n_tau));
        cK = above + take * pt;
    }
    // the sample: the first token whose cumulative mass exceeds u * cK
    float target = u * cK;
    float sigma = last_value(x, V, target, true, mx, T, Z, scratch);
    if (sigma < tau) sigma = tau;
    float above = mass(x, V, sigma, true, mx, T, Z, scratch);
    float ps = expf((sigma - mx) / T) / Z;
    int q = (int)floorf((target - above) / ps) + 1;
    float ties = 0.0f;
    for (int i = threadIdx.x; i < V; i += THREADS) ties += x[i] == sigma ? 1.0f : 0.0f;
    int n_sigma = (int)block_sum(ties, scratch);
    q = max(1, min(q, n_sigma));
    if (sigma == tau) q = min(q, take);
    // the q-th index (in increasing order) among the ties of sigma
    int lo = 0, hi = V - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        float c = 0.0f;
        for (int i = threadIdx.x; i <= mid; i += THREADS) c += x[i] == sigma ? 1.0f : 0.0f;
        if ((int)block_sum(c, scratch) >= q) hi = mid; else lo = mid + 1;
    }
    if (threadIdx.x == 0) token[r] = lo;
}
