// Sums into one global place from many threads or blocks, and blocks that read what other blocks
// write in the same launch. Each wrong kernel is followed by its right twin.

#define ROWS_PER_BLOCK 4

// Layer-norm backward, the parameter gradients: dgamma[c] = sum_r dy[r,c]*xhat[r,c],
// dbeta[c] = sum_r dy[r,c]. One block per 4 rows, one thread per column.
extern "C" __global__ void ln_bwd_params_plain(const float* dy, const float* xhat, float* dgamma,
                                               float* dbeta, int rows, int cols) {
    int c = threadIdx.x;
    int r0 = blockIdx.x * ROWS_PER_BLOCK;
    if (c >= cols) return;
    float g = 0.0f, b = 0.0f;
    for (int r = r0; r < min(r0 + ROWS_PER_BLOCK, rows); r++) {
        g += dy[r * cols + c] * xhat[r * cols + c];
        b += dy[r * cols + c];
    }
    dgamma[c] += g;  // MARK ln-dgamma
    dbeta[c] += b;   // MARK ln-dbeta
}

extern "C" __global__ void ln_bwd_params_atomic(const float* dy, const float* xhat, float* dgamma,
                                                float* dbeta, int rows, int cols) {
    int c = threadIdx.x;
    int r0 = blockIdx.x * ROWS_PER_BLOCK;
    if (c >= cols) return;
    float g = 0.0f, b = 0.0f;
    for (int r = r0; r < min(r0 + ROWS_PER_BLOCK, rows); r++) {
        g += dy[r * cols + c] * xhat[r * cols + c];
        b += dy[r * cols + c];
    }
    atomicAdd(&dgamma[c], g);
    atomicAdd(&dbeta[c], b);
}

// Attention backward, dQ[i,:] = scale * sum_j dS[i,j] * K[j,:]: one block per query row, one
// thread per key.
extern "C" __global__ void attn_bwd_dq_plain(const float* dS, const float* K, float* dQ, int keys,
                                             int d, float scale) {
    int i = blockIdx.x, j = threadIdx.x;
    if (j >= keys) return;
    float ds = dS[i * keys + j] * scale;
    for (int k = 0; k < d; k++)
        dQ[i * d + k] += ds * K[j * d + k];  // MARK dq-plain
}

extern "C" __global__ void attn_bwd_dq_atomic(const float* dS, const float* K, float* dQ, int keys,
                                              int d, float scale) {
    int i = blockIdx.x, j = threadIdx.x;
    if (j >= keys) return;
    float ds = dS[i * keys + j] * scale;
    for (int k = 0; k < d; k++)
        atomicAdd(&dQ[i * d + k], ds * K[j * d + k]);
}

// Histogram of small integers straight into global memory.
extern "C" __global__ void histogram_plain(const int* data, unsigned* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) bins[data[i]]++;  // MARK hist-plain
}

extern "C" __global__ void histogram_atomic(const int* data, unsigned* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[data[i]], 1u);
}

// Index of the first element equal to the maximum m (given).
extern "C" __global__ void first_max_plain(const float* x, float m, int* where, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] == m) *where = i;  // MARK argmax-plain
}

extern "C" __global__ void first_max_atomic(const float* x, float m, int* where, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] == m) atomicMin(where, i);
}

// Whether any element is negative: every thread that finds one stores the same 1, which is legal.
extern "C" __global__ void any_negative(const float* x, int* flag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f) *flag = 1;
}

// y[i] = t[i] + t[i+1] with t = x*x staged through global scratch; the neighbour comes from the
// same block (the block's last thread uses x directly).
extern "C" __global__ void smooth_staged_nosync(const float* x, float* t, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) t[i] = x[i] * x[i];  // MARK smooth-write
    if (i + 1 < n && threadIdx.x + 1 < blockDim.x)
        y[i] = t[i] + t[i + 1];  // MARK smooth-read
    else if (i < n)
        y[i] = t[i] + (i + 1 < n ? x[i + 1] * x[i + 1] : 0.0f);
}

extern "C" __global__ void smooth_staged_sync(const float* x, float* t, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) t[i] = x[i] * x[i];
    __syncthreads();
    if (i + 1 < n && threadIdx.x + 1 < blockDim.x)
        y[i] = t[i] + t[i + 1];
    else if (i < n)
        y[i] = t[i] + (i + 1 < n ? x[i + 1] * x[i + 1] : 0.0f);
}

__device__ float block_sum128(const float* x, int n) {
    __shared__ float s[128];
    int i = blockIdx.x * 128 + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 64; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    return s[0];
}

// out[b] = sum of block b's chunk + sum of block b-1's chunk, the neighbour's sum read from the
// partials the other block writes in the same launch.
extern "C" __global__ void pair_sums_onepass(const float* x, float* part, float* out, int n) {
    float s = block_sum128(x, n);
    int b = blockIdx.x;
    if (threadIdx.x == 0) {
        part[b] = s;  // MARK pair-write
        out[b] = s + (b > 0 ? part[b - 1] : 0.0f);  // MARK pair-read
    }
}

extern "C" __global__ void pair_sums_partials(const float* x, float* part, int n) {
    float s = block_sum128(x, n);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

extern "C" __global__ void pair_sums_combine(const float* part, float* out, int blocks) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < blocks) out[b] = part[b] + (b > 0 ? part[b - 1] : 0.0f);
}

// A whole-array sum in one launch: the last block to finish adds the partials (the CUDA sample's
// threadFenceReduction). The wrong one forgets the fence between its partial and its ticket.
extern "C" __global__ void sum_last_block_nofence(const float* x, float* part, float* out,
                                                  unsigned* ticket, int n) {
    __shared__ bool last;
    float s = block_sum128(x, n);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = s;  // MARK fence-write
        unsigned t = atomicInc(ticket, gridDim.x);
        last = t == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += part[b];  // MARK fence-read
        *out = total;
    }
}

extern "C" __global__ void sum_last_block_fence(const float* x, float* part, float* out,
                                                unsigned* ticket, int n) {
    __shared__ bool last;
    float s = block_sum128(x, n);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = s;
        __threadfence();
        unsigned t = atomicInc(ticket, gridDim.x);
        last = t == gridDim.x - 1;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += part[b];
        *out = total;
    }
}

// out[i] = x[p[i]] through the inverse of a permutation q (p = q^-1): each block scatters its chunk
// of the inverse, then gathers, in one launch, through entries other blocks write.
extern "C" __global__ void inverse_gather_onepass(const int* q, const float* x, int* p, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[q[i]] = i;  // MARK inv-write
    __syncthreads();
    if (i < n) out[i] = x[p[i]];  // MARK inv-read
}

extern "C" __global__ void inverse_scatter(const int* q, int* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[q[i]] = i;
}

extern "C" __global__ void gather_through(const float* x, const int* p, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[p[i]];
}

// One BFS level: every edge from the frontier labels its unreached target. Many threads may store
// the same label to one vertex (a check, then a constant, not a sum): legal, and no finding.
extern "C" __global__ void bfs_label(const int* src, const int* dst, int* dist, int m, int level) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < m && dist[src[e]] == level && dist[dst[e]] == -1) dist[dst[e]] = level + 1;
}
