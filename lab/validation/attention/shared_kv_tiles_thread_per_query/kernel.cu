// Design: one thread per query row, 64 queries per block; the block stages 32 keys and values at a time in shared memory; online softmax.
#define MAX_D 128
#define TK 32
extern "C" __global__ void attention(const float* Q, const float* K, const float* V, float* O, int S, int D, int causal)
{
    __shared__ float ks[TK][MAX_D], vs[TK][MAX_D];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    size_t base = (size_t)blockIdx.y * S * D;
    float scale = 1.0f / sqrtf((float)D);
    float q[MAX_D], acc[MAX_D];
    for (int d = 0; d < D; d++) { q[d] = i < S ? Q[base + (size_t)i * D + d] : 0.0f; acc[d] = 0.0f; }
    float m = -1e30f, l = 0.0f;
    int block_last = min(S - 1, causal ? (int)(blockIdx.x * blockDim.x + blockDim.x - 1) : S - 1);
    int last = causal ? i : S - 1;
    for (int j0 = 0; j0 <= block_last; j0 += TK) {
        for (int e = threadIdx.x; e < TK * D; e += blockDim.x) {
            int jj = e / D, d = e % D;
            ks[jj][d] = j0 + jj < S ? K[base + (size_t)(j0 + jj) * D + d] : 0.0f;
            vs[jj][d] = j0 + jj < S ? V[base + (size_t)(j0 + jj) * D + d] : 0.0f;
        }
        __syncthreads();
        if (i < S) {
            for (int jj = 0; jj < TK && j0 + jj <= last; jj++) {
                float s = 0.0f;
                for (int d = 0; d < D; d++) s += q[d] * ks[jj][d];
                s *= scale;
                float mn = fmaxf(m, s), corr = expf(m - mn), p = expf(s - mn);
                l = l * corr + p;
                for (int d = 0; d < D; d++) acc[d] = acc[d] * corr + p * vs[jj][d];
                m = mn;
            }
        }
        __syncthreads();
    }
    if (i < S)
        for (int d = 0; d < D; d++) O[base + (size_t)i * D + d] = acc[d] / l;
}
