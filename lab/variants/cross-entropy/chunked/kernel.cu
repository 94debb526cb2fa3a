// Fused cross-entropy, forward and backward: per-row loss and dlogits = (softmax - onehot) / N_valid,
// the softmax never written, the logits read from HBM exactly once.
//
// The traffic is the score: 8NV bytes (read the logits, write dlogits). A 128256-float row is 500 KB,
// too long for one block to keep on chip, and a block that reads it twice (once for the statistics,
// once for the gradient) pays 12NV unless the second read hits L2, which it mostly does not with
// hundreds of 500 KB rows in flight. So a row is split into G chunks of blockDim.x * 16 floats,
// one block each, and each block keeps its chunk in registers (16 per thread) from load to store:
//  1. the block's chunk max m_c and s_c = sum exp(x - m_c), reduced over the block;
//  2. the pair goes to a per-row table in global memory, and the block waits until all G chunks
//     of its row have arrived (a counter per row), then merges the G pairs: m = max m_c,
//     s = sum s_c exp(m_c - m). The pairs are tiny and stay in L2;
//  3. dlogits = exp(x - m) * (1 / (s N_valid)), minus 1 / N_valid at the target, from the registers.
// Waiting on other blocks needs them to be running: blocks take their (row, chunk) from an atomic
// ticket when they start, not from blockIdx, so every chunk a running block waits for belongs to a
// block that started earlier or to the last tickets handed out; rows whose tickets are all taken
// always finish, so their slots free up and the last row's remaining chunks get running blocks.
// N_valid is a batch-wide count, so a one-block kernel counts it first; ignored rows write zeros.
#define FULL 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)  // -inf without <math.h> (NVRTC has no host headers)
#define CP 16                                // floats per thread: the chunk is blockDim.x * CP

// n_valid[0] = number of targets that are not ignore_index. One block; N is a few thousand ints.
extern "C" __global__ void __launch_bounds__(1024)
count_valid(const int* __restrict__ targets, int N, int ignore_index, int* __restrict__ n_valid)
{
    __shared__ int part[32];
    int c = 0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) c += targets[i] != ignore_index;
    for (int off = 16; off > 0; off >>= 1) c += __shfl_xor_sync(FULL, c, off);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = c;
    __syncthreads();
    if (threadIdx.x < 32) {
        c = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0;
        for (int off = 16; off > 0; off >>= 1) c += __shfl_xor_sync(FULL, c, off);
        if (threadIdx.x == 0) n_valid[0] = c;
    }
}

// Block-wide max or sum (blockDim.x a multiple of 32); every thread gets the result.
template <bool IS_MAX>
__device__ float block_reduce(float v, float* red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(FULL, v, off);
        v = IS_MAX ? fmaxf(v, o) : v + o;
    }
    if (lane == 0) red[warp] = v;
    __syncthreads();  // publish the per-warp partials
    v = lane < warps ? red[lane] : (IS_MAX ? NEG_INF : 0.0f);
    for (int off = 16; off > 0; off >>= 1) {
        const float o = __shfl_xor_sync(FULL, v, off);
        v = IS_MAX ? fmaxf(v, o) : v + o;
    }
    __syncthreads();  // everyone has read red[] before the next reduction overwrites it
    return v;
}

// stats: N * G (m, s) pairs; arrived: N counters and, after them, the ticket counter (all zero).
extern "C" __global__ void __launch_bounds__(512, 3)
cross_entropy(const float* __restrict__ logits, const int* __restrict__ targets, const int* __restrict__ n_valid,
              float2* __restrict__ stats, int* __restrict__ arrived, int* __restrict__ ticket,
              float* __restrict__ loss, float* __restrict__ dlogits, int V, int G, int ignore_index)
{
    __shared__ float red[32];
    __shared__ int item_s;
    __shared__ float m_s, s_s;
    const int tid = threadIdx.x, nt = blockDim.x;
    if (tid == 0) item_s = atomicAdd(ticket, 1);
    __syncthreads();
    const int r = item_s / G, c = item_s % G;
    const float* const row = logits + (size_t)r * V;
    float* const grad = dlogits + (size_t)r * V;
    const int j0 = c * nt * CP + tid;  // element k of this thread: j0 + k * nt (coalesced per k)

    const int t = targets[r];
    if (t == ignore_index) {  // every block of the row returns here: nobody waits for its chunks
        for (int k = 0; k < CP; ++k)
            if (j0 + k * nt < V) grad[j0 + k * nt] = 0.0f;
        if (c == 0 && tid == 0) loss[r] = 0.0f;
        return;
    }

    // 1. The chunk, in registers; all CP loads issue before the first use (memory-level parallelism).
    float x[CP];
    float m = NEG_INF;
#pragma unroll
    for (int k = 0; k < CP; ++k) {
        const int j = j0 + k * nt;
        x[k] = j < V ? __ldcs(row + j) : NEG_INF;  // read once: evict-first
        m = fmaxf(m, x[k]);
    }
    m = block_reduce<true>(m, red);  // finite: every chunk holds at least one element
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < CP; ++k) s += __expf(x[k] - m);  // padding: exp(-inf) = 0
    s = block_reduce<false>(s, red);

    // 2. The row's statistics from its G chunks.
    if (tid == 0) {
        if (G > 1) {
            stats[(size_t)r * G + c] = make_float2(m, s);
            __threadfence();  // the pair is visible before the count says so
            atomicAdd(&arrived[r], 1);
            while (*(volatile int*)&arrived[r] < G) {
            }
            __threadfence();
            float mm = NEG_INF, ss = 0.0f;
            for (int g = 0; g < G; ++g) {
                const float2 p = __ldcg(stats + (size_t)r * G + g);  // from L2, not a stale L1 line
                const float mx = fmaxf(mm, p.x);
                ss = ss * __expf(mm - mx) + p.y * __expf(p.x - mx);  // mm = -inf at first: exp = 0
                mm = mx;
            }
            m = mm;
            s = ss;
        }
        m_s = m;
        s_s = s;
        // The block whose chunk holds the target writes the loss: (m - x_t) + log s, with no
        // rounding of an lse near 1e4 in between.
        if (c == t / (nt * CP)) loss[r] = (m - row[t]) + logf(s);
    }
    __syncthreads();
    m = m_s;
    const float inv_n = 1.0f / (float)n_valid[0];
    const float scale = inv_n / s_s;  // p_j / N_valid = exp(x_j - m) * scale

    // 3. dlogits from the registers, streaming stores (nothing reads them back).
#pragma unroll
    for (int k = 0; k < CP; ++k) {
        const int j = j0 + k * nt;
        if (j < V) __stcs(grad + j, __expf(x[k] - m) * scale - (j == t ? inv_n : 0.0f));
    }
}
