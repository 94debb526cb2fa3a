// kata-expect: race-raw
// No barrier between staging the V tile and multiplying by it, so warps read V rows other warps have not stored yet.
// Attention forward, O = softmax(Q·Kᵀ/√D, optional causal mask)·V, float32, flash-attention style:
// one block owns BQ query rows of one (batch, head) and streams K and V through shared memory in
// tiles of BK keys, so the S×S score matrix never exists in memory (reads are O(S·D) per block).
//
// The trick is the online softmax: each row keeps a running max m, a running sum l and an output
// accumulator o. When a tile raises the max, l and o are rescaled by exp(m_old - m_new) before
// the tile's terms are added, so one pass over the keys gives the exact softmax; O = o / l at the end.
//
// Each thread owns 4 query rows × BK/16 key columns of a score tile, and 4 rows × D/16 columns of
// O: register blocking, so every value read from shared memory feeds several FMAs. Q and P are
// stored transposed so a thread's 4 rows are one float4 read. Scores are kept in log2 units
// (Q is pre-scaled by log2(e)/√D) so the exponentials are a single exp2f each.
#define FULL 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)  // -inf without <math.h> (NVRTC has no host headers)

template <int D, int BQ, int BK>
__device__ void attention_block(const float* __restrict__ Q, const float* __restrict__ K,
                                const float* __restrict__ V, float* __restrict__ O, int S, int causal)
{
    constexpr int NT = (BQ / 4) * 16;  // threads: 16 per group of 4 rows
    constexpr int RN = BK / 16;        // score columns per thread: tx, tx + 16, ...
    constexpr int DN = D / 16;         // output columns per thread: tx, tx + 16, ...
    constexpr int QP = BQ + 4;         // padded row of the transposed tiles; keeps float4 alignment
    __shared__ __align__(16) float Qt[D][QP];   // Q tile, transposed: Qt[d][row]
    __shared__ float KV[BK][D + 1];             // the K tile, then the V tile (+1: no bank conflicts)
    __shared__ __align__(16) float Pt[BK][QP];  // probabilities, transposed: Pt[key][row]

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int q0 = blockIdx.x * BQ;
    const size_t base = (size_t)blockIdx.y * S * D;  // this (batch, head)'s S×D slice
    const float qscale = 1.4426950408889634f / sqrtf((float)D);  // log2(e) / sqrt(D)

    for (int l = tid; l < BQ * D; l += NT) {
        const int r = l / D, d = l % D;  // d fastest: coalesced global reads
        Qt[d][r] = q0 + r < S ? Q[base + (size_t)(q0 + r) * D + d] * qscale : 0.0f;
    }

    float m[4], lsum[4], o[4][DN];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        m[i] = NEG_INF;
        lsum[i] = 0.0f;
#pragma unroll
        for (int dd = 0; dd < DN; ++dd) o[i][dd] = 0.0f;
    }

    // Causal: keys after this block's last query are masked for every row; skip their tiles.
    const int kv_end = causal ? min(S, q0 + BQ) : S;
    for (int k0 = 0; k0 < kv_end; k0 += BK) {
        __syncthreads();  // the previous tile's P·V is done with KV and Pt (and Qt is complete)
        for (int l = tid; l < BK * D; l += NT) {
            const int c = l / D, d = l % D;
            KV[c][d] = k0 + c < S ? K[base + (size_t)(k0 + c) * D + d] : 0.0f;
        }
        __syncthreads();

        float s[4][RN];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < RN; ++j) s[i][j] = 0.0f;
#pragma unroll 8
        for (int d = 0; d < D; ++d) {
            const float4 q = *reinterpret_cast<const float4*>(&Qt[d][ty * 4]);
            const float qi[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                const float k = KV[tx + 16 * j][d];
#pragma unroll
                for (int i = 0; i < 4; ++i) s[i][j] = fmaf(qi[i], k, s[i][j]);
            }
        }

#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int q = q0 + ty * 4 + i;
            float tile_max = NEG_INF;
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                const int kc = k0 + tx + 16 * j;
                if (kc >= S || (causal && kc > q)) s[i][j] = NEG_INF;
                tile_max = fmaxf(tile_max, s[i][j]);
            }
            // The row's 16 threads are 16 consecutive lanes: xor offsets < 16 stay inside them.
            for (int off = 8; off > 0; off >>= 1) tile_max = fmaxf(tile_max, __shfl_xor_sync(FULL, tile_max, off));
            // Key 0 is visible to every row, so after the first tile m is finite and m_new is too.
            const float m_new = fmaxf(m[i], tile_max);
            const float corr = exp2f(m[i] - m_new);  // 0 on the first tile (m = -inf)
            float part = 0.0f;
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                const float p = exp2f(s[i][j] - m_new);  // masked: exp2(-inf) = 0
                part += p;
                Pt[tx + 16 * j][ty * 4 + i] = p;
            }
            // Each thread keeps a partial sum over its own columns; the row's partials are added
            // once at the end (the rescaling factor is the same for all 16 threads of a row).
            lsum[i] = lsum[i] * corr + part;
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) o[i][dd] *= corr;
            m[i] = m_new;
        }
        __syncthreads();  // everyone is done reading K, and P is complete

        for (int l = tid; l < BK * D; l += NT) {
            const int c = l / D, d = l % D;
            KV[c][d] = k0 + c < S ? V[base + (size_t)(k0 + c) * D + d] : 0.0f;
        }

#pragma unroll 8
        for (int c = 0; c < BK; ++c) {
            const float4 p = *reinterpret_cast<const float4*>(&Pt[c][ty * 4]);
            const float pi[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) {
                const float v = KV[c][tx + 16 * dd];
#pragma unroll
                for (int i = 0; i < 4; ++i) o[i][dd] = fmaf(pi[i], v, o[i][dd]);
            }
        }
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float l = lsum[i];
        for (int off = 8; off > 0; off >>= 1) l += __shfl_xor_sync(FULL, l, off);
        const int q = q0 + ty * 4 + i;
        if (q < S) {
            const float inv = 1.0f / l;
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) O[base + (size_t)q * D + tx + 16 * dd] = o[i][dd] * inv;
        }
    }
}

// One entry per head size; tiles chosen so static shared memory stays under 48 KB.
extern "C" __global__ void __launch_bounds__(256) attention_d32(const float* __restrict__ Q, const float* __restrict__ K,
                                                                const float* __restrict__ V, float* __restrict__ O, int S, int causal)
{
    attention_block<32, 64, 64>(Q, K, V, O, S, causal);
}

extern "C" __global__ void __launch_bounds__(256) attention_d64(const float* __restrict__ Q, const float* __restrict__ K,
                                                                const float* __restrict__ V, float* __restrict__ O, int S, int causal)
{
    attention_block<64, 64, 32>(Q, K, V, O, S, causal);
}

extern "C" __global__ void __launch_bounds__(128) attention_d128(const float* __restrict__ Q, const float* __restrict__ K,
                                                                 const float* __restrict__ V, float* __restrict__ O, int S, int causal)
{
    attention_block<128, 32, 32>(Q, K, V, O, S, causal);
}
