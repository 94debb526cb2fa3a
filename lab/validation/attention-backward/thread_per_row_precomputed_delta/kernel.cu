// Design: a first kernel computes D_i = dO_i . O_i once per row; then grad_kv (thread per key row) and grad_q (thread per query row) with the query/key row held in registers.
#define MAX_D 128
extern "C" __global__ void row_delta(const float* O, const float* dO, float* delta, int S, int D)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D + (size_t)i * D;
    float s = 0.0f;
    for (int d = 0; d < D; d++) s += dO[base + d] * O[base + d];
    delta[(size_t)blockIdx.y * S + i] = s;
}
extern "C" __global__ void grad_kv(const float* Q, const float* K, const float* V, const float* dO, const float* LSE,
                                   const float* delta, float* dK, float* dV, int S, int D, int causal)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    const float* lse = LSE + (size_t)blockIdx.y * S;
    const float* dl = delta + (size_t)blockIdx.y * S;
    float scale = 1.0f / sqrtf((float)D);
    float k[MAX_D], v[MAX_D], dk[MAX_D], dv[MAX_D];
    for (int d = 0; d < D; d++) {
        k[d] = K[base + (size_t)j * D + d]; v[d] = V[base + (size_t)j * D + d]; dk[d] = 0.0f; dv[d] = 0.0f;
    }
    for (int i = causal ? j : 0; i < S; i++) {
        const float* q = Q + base + (size_t)i * D;
        const float* g = dO + base + (size_t)i * D;
        float s = 0.0f, dp = 0.0f;
        for (int d = 0; d < D; d++) { s += q[d] * k[d]; dp += g[d] * v[d]; }
        float p = expf(s * scale - lse[i]);
        float ds = p * (dp - dl[i]) * scale;
        for (int d = 0; d < D; d++) { dv[d] += p * g[d]; dk[d] += ds * q[d]; }
    }
    for (int d = 0; d < D; d++) { dK[base + (size_t)j * D + d] = dk[d]; dV[base + (size_t)j * D + d] = dv[d]; }
}
extern "C" __global__ void grad_q(const float* Q, const float* K, const float* V, const float* dO, const float* LSE,
                                  const float* delta, float* dQ, int S, int D, int causal)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= S) return;
    size_t base = (size_t)blockIdx.y * S * D;
    float scale = 1.0f / sqrtf((float)D);
    float q[MAX_D], g[MAX_D], dq[MAX_D];
    for (int d = 0; d < D; d++) { q[d] = Q[base + (size_t)i * D + d]; g[d] = dO[base + (size_t)i * D + d]; dq[d] = 0.0f; }
    float lse = LSE[(size_t)blockIdx.y * S + i], di = delta[(size_t)blockIdx.y * S + i];
    int last = causal ? i : S - 1;
    for (int j = 0; j <= last; j++) {
        const float* k = K + base + (size_t)j * D;
        const float* v = V + base + (size_t)j * D;
        float s = 0.0f, dp = 0.0f;
        for (int d = 0; d < D; d++) { s += q[d] * k[d]; dp += g[d] * v[d]; }
        float ds = expf(s * scale - lse) * (dp - di) * scale;
        for (int d = 0; d < D; d++) dq[d] += ds * k[d];
    }
    for (int d = 0; d < D; d++) dQ[base + (size_t)i * D + d] = dq[d];
}
