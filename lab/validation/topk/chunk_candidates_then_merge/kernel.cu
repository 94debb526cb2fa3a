// Design: the stub's two stages, each by repeated block argmax: k candidates per 4096-element chunk (blocks over chunks x rows), then k rounds over a row's candidates.
__device__ bool better(float v, int i, float bv, int bi) { return bi < 0 || v > bv || (v == bv && i < bi); }
// k rounds of block argmax over n (value, index) pairs; idx == nullptr means index = base + position
__device__ void select_k(const float* vals, const int* idx, int base, int n, int k, float* out_v, int* out_i)
{
    __shared__ float sv[256];
    __shared__ int si[256];
    float pv = 0.0f;
    int pi = -1;
    for (int r = 0; r < k; r++) {
        if (r > 0 && pi < 0) {  // no elements left: the rest are empty slots
            if (threadIdx.x == 0) { out_v[r] = 0.0f; out_i[r] = -1; }
            continue;
        }
        float bv = 0.0f;
        int bi = -1;
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            float v = vals[j];
            int i = idx ? idx[j] : base + j;
            if (i < 0) continue;  // an empty slot of a short chunk
            bool after = r == 0 || v < pv || (v == pv && i > pi);
            if (after && better(v, i, bv, bi)) { bv = v; bi = i; }
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
        if (threadIdx.x == 0) { out_v[r] = pv; out_i[r] = pi; }  // pi = -1 past the chunk's end: an empty slot
        __syncthreads();
    }
}
extern "C" __global__ void topk_partial(const float* x, int L, int k, int chunk, float* cand_vals, int* cand_idx)
{
    int c = blockIdx.x, r = blockIdx.y, chunks = gridDim.x;
    int start = c * chunk, n = min(chunk, L - start);
    size_t out = ((size_t)r * chunks + c) * k;
    select_k(x + (size_t)r * L + start, nullptr, start, n, k, cand_vals + out, cand_idx + out);
}
extern "C" __global__ void topk_merge(const float* cand_vals, const int* cand_idx, int count, int k, float* values, int* indices)
{
    int r = blockIdx.x;
    select_k(cand_vals + (size_t)r * count, cand_idx + (size_t)r * count, 0, count, k, values + (size_t)r * k, indices + (size_t)r * k);
}
