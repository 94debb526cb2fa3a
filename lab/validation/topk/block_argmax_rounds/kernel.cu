// Design: one 256-thread block per row, k rounds: each round a block-wide argmax (shared tree) over the elements after the previous winner in (value desc, index asc) order.
__device__ bool better(float v, int i, float bv, int bi) { return bi < 0 || v > bv || (v == bv && i < bi); }
extern "C" __global__ void topk_rows(const float* x, float* values, int* indices, int L, int k)
{
    __shared__ float sv[256];
    __shared__ int si[256];
    const float* row = x + (size_t)blockIdx.x * L;
    float pv = 0.0f;
    int pi = -1;  // previous winner; -1 before the first round
    for (int r = 0; r < k; r++) {
        float bv = 0.0f;
        int bi = -1;
        for (int j = threadIdx.x; j < L; j += blockDim.x) {
            float v = row[j];
            bool after = pi < 0 || v < pv || (v == pv && j > pi);
            if (after && better(v, j, bv, bi)) { bv = v; bi = j; }
        }
        sv[threadIdx.x] = bv; si[threadIdx.x] = bi;
        __syncthreads();
        for (int st = blockDim.x / 2; st > 0; st /= 2) {
            if (threadIdx.x < st && si[threadIdx.x + st] >= 0 &&
                better(sv[threadIdx.x + st], si[threadIdx.x + st], sv[threadIdx.x], si[threadIdx.x])) {
                sv[threadIdx.x] = sv[threadIdx.x + st]; si[threadIdx.x] = si[threadIdx.x + st];
            }
            __syncthreads();
        }
        pv = sv[0]; pi = si[0];
        if (threadIdx.x == 0) { values[(size_t)blockIdx.x * k + r] = pv; indices[(size_t)blockIdx.x * k + r] = pi; }
        __syncthreads();
    }
}
