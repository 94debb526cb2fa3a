// kata-expect: out-of-bounds
// grad_kv stages its K and V tile as if S were a multiple of 64 (rows bounded by k0 + 64, not S), so the last key tile of the last (batch, head) reads past the end of K and V.
// Attention backward, dQ, dK, dV from Q, K, V, O, dO and the forward's LSE (float32), flash-style:
// nothing of size S×S ever reaches memory. Three kernels:
//  * row_dot: D_i = dO_i·O_i, one warp per row. It equals sum_j P_ij dP_ij (the term the softmax's
//    Jacobian subtracts), for a length-D dot product instead of a length-S sum.
//  * grad_kv: one block per tile of BKV keys. K and V stay (transposed) in shared memory for the
//    block's whole life; it loops over tiles of BQ queries, recomputes the scores and
//    P = exp2(s·log2(e)/√D - LSE·log2(e)) from Q and LSE, dP = dO·Vᵀ, dS = P∘(dP - D), and
//    accumulates dV += Pᵀ·dO and dK += dSᵀ·Q in registers: a key's sums over all queries end in
//    the block that owns the key, so no atomics and every output is written once.
//  * grad_q: one block per tile of BQ queries, the mirror image: loops over key tiles, recomputes
//    P and dS, accumulates dQ += dS·K. Recomputing QKᵀ and dO·Vᵀ costs 2 of the 7 products; in
//    exchange dQ needs no zeroing, no atomics, and the result is the same bits on every run.
// Register blocking as in the forward: each thread owns a 4 × (tile/16) piece of every score tile
// and 4 rows × D/16 columns of its accumulators, so each value read from shared memory feeds
// several FMAs; the operand read 4-at-a-time is stored transposed so that read is one float4.
// Causal: a key tile's query loop starts at its own first key, the dQ loop stops at the last query.
#define FULL 0xffffffffu
#define LOG2E 1.4426950408889634f

// Dvec[r] = sum_d dO[r][d] * O[r][d] for every row r of the B·H·S rows.
extern "C" __global__ void row_dot(const float* __restrict__ dO, const float* __restrict__ O,
                                   float* __restrict__ Dvec, int rows, int D)
{
    const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (row >= rows) return;  // the whole warp leaves together: the shuffles below see 32 lanes
    const float* a = dO + (size_t)row * D;
    const float* b = O + (size_t)row * D;
    float s = 0.0f;
    for (int d = lane; d < D; d += 32) s = fmaf(a[d], b[d], s);
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(FULL, s, off);
    if (lane == 0) Dvec[row] = s;
}

// Stage two ROWS × D tiles (rows r0.. of a and b, zero past row `rows`) into shared memory, as
// dst[row][d] (leading dimension LD) or transposed, dst[d][row]. Every thread issues all its float4
// loads before its first store, so the tile costs one memory round trip, not one per element.
template <int D, int ROWS, int NT, bool TRANSPOSED, int LD>
__device__ __forceinline__ void stage_pair(float* __restrict__ da, float* __restrict__ db,
                                           const float* __restrict__ a, const float* __restrict__ b,
                                           int r0, int rows, int tid)
{
    constexpr int Q4 = D / 4, N4 = ROWS * Q4, IT = (N4 + NT - 1) / NT;
    float4 va[IT], vb[IT];
#pragma unroll
    for (int it = 0; it < IT; ++it) {
        const int l = tid + it * NT, r = l / Q4, c = l % Q4;  // c fastest: coalesced global reads
        const bool in = l < N4 && r0 + r < rows;
        const size_t off = (size_t)(r0 + r) * D + 4 * c;
        va[it] = in ? *reinterpret_cast<const float4*>(a + off) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        vb[it] = in ? *reinterpret_cast<const float4*>(b + off) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int it = 0; it < IT; ++it) {
        const int l = tid + it * NT, r = l / Q4, d = 4 * (l % Q4);
        if (l < N4) {
            const float xa[4] = {va[it].x, va[it].y, va[it].z, va[it].w}, xb[4] = {vb[it].x, vb[it].y, vb[it].z, vb[it].w};
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int at = TRANSPOSED ? (d + e) * LD + r : r * LD + d + e;
                da[at] = xa[e];
                db[at] = xb[e];
            }
        }
    }
}

template <int D, int BQ, int BKV>
__device__ void grad_kv_block(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                              const float* __restrict__ dO, const float* __restrict__ LSE, const float* __restrict__ Dvec,
                              float* __restrict__ dK, float* __restrict__ dV, int S, int causal)
{
    constexpr int NT = 4 * BKV;  // 16 threads per group of 4 keys
    constexpr int RQ = BQ / 16;  // query columns per thread: tx, tx + 16, ...
    constexpr int DN = D / 16;   // output columns per thread: tx, tx + 16, ...
    constexpr int KP = BKV + 4;  // padded row of the [.][key] tiles; keeps float4 alignment
    constexpr int RP = D + 1;    // padded row of the [query][d] tiles: no bank conflicts
    extern __shared__ __align__(16) float smem[];
    float* const Kt = smem;           // [D][KP]  K tile, transposed
    float* const Vt = Kt + D * KP;    // [D][KP]  V tile, transposed
    float* const PS = Vt + D * KP;    // [BQ][KP] P, then dS, of the current query tile
    float* const Qs = PS + BQ * KP;   // [BQ][RP]
    float* const dOs = Qs + BQ * RP;  // [BQ][RP]
    float* const lse2 = dOs + BQ * RP;  // [BQ] LSE in log2 units
    float* const Dv = lse2 + BQ;        // [BQ]

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int k0 = blockIdx.x * BKV, bh = blockIdx.y;
    const size_t base = (size_t)bh * S * D;
    const float scale = rsqrtf((float)D), c2 = LOG2E * scale;

    stage_pair<D, BKV, NT, true, KP>(Kt, Vt, K + base, V + base, k0, k0 + BKV, tid);

    float dk[4][DN], dv[4][DN];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int dd = 0; dd < DN; ++dd) dk[i][dd] = dv[i][dd] = 0.0f;

    // Causal: queries before k0 see none of this tile's keys.
    for (int q0 = causal ? k0 / BQ * BQ : 0; q0 < S; q0 += BQ) {
        __syncthreads();  // the last tile's readers of Qs, dOs, PS are done (first time: Kt, Vt are complete)
        stage_pair<D, BQ, NT, false, RP>(Qs, dOs, Q + base, dO + base, q0, S, tid);
        for (int r = tid; r < BQ; r += NT) {
            const bool in = q0 + r < S;
            lse2[r] = in ? LSE[(size_t)bh * S + q0 + r] * LOG2E : 0.0f;
            Dv[r] = in ? Dvec[(size_t)bh * S + q0 + r] : 0.0f;
        }
        __syncthreads();

        // Sᵀ (keys × queries) and dPᵀ together: one pass over d reads each K, V, Q, dO value once.
        float s[4][RQ], dp[4][RQ];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < RQ; ++j) s[i][j] = dp[i][j] = 0.0f;
#pragma unroll 4
        for (int d = 0; d < D; ++d) {
            const float4 k4 = *reinterpret_cast<const float4*>(&Kt[d * KP + ty * 4]);
            const float4 v4 = *reinterpret_cast<const float4*>(&Vt[d * KP + ty * 4]);
            const float kk[4] = {k4.x, k4.y, k4.z, k4.w}, vv[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
            for (int j = 0; j < RQ; ++j) {
                const float qv = Qs[(tx + 16 * j) * RP + d], ov = dOs[(tx + 16 * j) * RP + d];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    s[i][j] = fmaf(kk[i], qv, s[i][j]);
                    dp[i][j] = fmaf(vv[i], ov, dp[i][j]);
                }
            }
        }

        // P (masked entries exactly 0, selected rather than multiplied) and dS = P (dP - D).
#pragma unroll
        for (int j = 0; j < RQ; ++j) {
            const int qr = tx + 16 * j, q = q0 + qr;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int key = k0 + ty * 4 + i;
                const bool vis = q < S && key < S && (!causal || key <= q);
                const float p = vis ? exp2f(fmaf(s[i][j], c2, -lse2[qr])) : 0.0f;
                s[i][j] = p;
                dp[i][j] = p * (dp[i][j] - Dv[qr]);
            }
            *reinterpret_cast<float4*>(&PS[qr * KP + ty * 4]) = make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);
        }
        __syncthreads();  // P is complete

#pragma unroll 4
        for (int qq = 0; qq < BQ; ++qq) {  // dV += Pᵀ·dO
            const float4 p4 = *reinterpret_cast<const float4*>(&PS[qq * KP + ty * 4]);
            const float pp[4] = {p4.x, p4.y, p4.z, p4.w};
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) {
                const float o = dOs[qq * RP + tx + 16 * dd];
#pragma unroll
                for (int i = 0; i < 4; ++i) dv[i][dd] = fmaf(pp[i], o, dv[i][dd]);
            }
        }
        __syncthreads();  // everyone is done reading P before dS overwrites it
#pragma unroll
        for (int j = 0; j < RQ; ++j)
            *reinterpret_cast<float4*>(&PS[(tx + 16 * j) * KP + ty * 4]) = make_float4(dp[0][j], dp[1][j], dp[2][j], dp[3][j]);
        __syncthreads();  // dS is complete

#pragma unroll 4
        for (int qq = 0; qq < BQ; ++qq) {  // dK += dSᵀ·Q (the 1/√D at the end)
            const float4 g4 = *reinterpret_cast<const float4*>(&PS[qq * KP + ty * 4]);
            const float gg[4] = {g4.x, g4.y, g4.z, g4.w};
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) {
                const float qv = Qs[qq * RP + tx + 16 * dd];
#pragma unroll
                for (int i = 0; i < 4; ++i) dk[i][dd] = fmaf(gg[i], qv, dk[i][dd]);
            }
        }
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int key = k0 + ty * 4 + i;
        if (key < S) {
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) {
                dK[base + (size_t)key * D + tx + 16 * dd] = dk[i][dd] * scale;
                dV[base + (size_t)key * D + tx + 16 * dd] = dv[i][dd];
            }
        }
    }
}

template <int D, int BQ, int BKV>
__device__ void grad_q_block(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                             const float* __restrict__ dO, const float* __restrict__ LSE, const float* __restrict__ Dvec,
                             float* __restrict__ dQ, int S, int causal)
{
    constexpr int NT = 4 * BQ;    // 16 threads per group of 4 queries
    constexpr int RK = BKV / 16;  // key columns per thread: tx, tx + 16, ...
    constexpr int DN = D / 16;
    constexpr int QP = BQ + 4;
    constexpr int RP = D + 1;
    extern __shared__ __align__(16) float smem[];
    float* const Qt = smem;             // [D][QP]   Q tile, transposed
    float* const dOt = Qt + D * QP;     // [D][QP]   dO tile, transposed
    float* const dSt = dOt + D * QP;    // [BKV][QP] dS, transposed: dSt[key][query]
    float* const Ks = dSt + BKV * QP;   // [BKV][RP]
    float* const Vs = Ks + BKV * RP;    // [BKV][RP]
    float* const lse2 = Vs + BKV * RP;  // [BQ]
    float* const Dv = lse2 + BQ;        // [BQ]

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    // Causal: the last query tiles see the most keys; start them first so short blocks fill the tail.
    const int q0 = (causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * BQ, bh = blockIdx.y;
    const size_t base = (size_t)bh * S * D;
    const float scale = rsqrtf((float)D), c2 = LOG2E * scale;

    stage_pair<D, BQ, NT, true, QP>(Qt, dOt, Q + base, dO + base, q0, S, tid);
    for (int r = tid; r < BQ; r += NT) {
        const bool in = q0 + r < S;
        lse2[r] = in ? LSE[(size_t)bh * S + q0 + r] * LOG2E : 0.0f;
        Dv[r] = in ? Dvec[(size_t)bh * S + q0 + r] : 0.0f;
    }

    float dq[4][DN];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int dd = 0; dd < DN; ++dd) dq[i][dd] = 0.0f;

    const int k_end = causal ? min(S, q0 + BQ) : S;  // causal: keys past the last query are masked
    for (int k0 = 0; k0 < k_end; k0 += BKV) {
        __syncthreads();  // the last tile's readers of Ks, Vs, dSt are done (first time: Qt, dOt complete)
        stage_pair<D, BKV, NT, false, RP>(Ks, Vs, K + base, V + base, k0, S, tid);
        __syncthreads();

        float s[4][RK], dp[4][RK];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < RK; ++j) s[i][j] = dp[i][j] = 0.0f;
#pragma unroll 4
        for (int d = 0; d < D; ++d) {
            const float4 q4 = *reinterpret_cast<const float4*>(&Qt[d * QP + ty * 4]);
            const float4 o4 = *reinterpret_cast<const float4*>(&dOt[d * QP + ty * 4]);
            const float qq[4] = {q4.x, q4.y, q4.z, q4.w}, oo[4] = {o4.x, o4.y, o4.z, o4.w};
#pragma unroll
            for (int j = 0; j < RK; ++j) {
                const float kv = Ks[(tx + 16 * j) * RP + d], vv = Vs[(tx + 16 * j) * RP + d];
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    s[i][j] = fmaf(qq[i], kv, s[i][j]);
                    dp[i][j] = fmaf(oo[i], vv, dp[i][j]);
                }
            }
        }

#pragma unroll
        for (int j = 0; j < RK; ++j) {
            const int key = k0 + tx + 16 * j;
            float g[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int qr = ty * 4 + i, q = q0 + qr;
                const bool vis = q < S && key < S && (!causal || key <= q);
                const float p = vis ? exp2f(fmaf(s[i][j], c2, -lse2[qr])) : 0.0f;
                g[i] = p * (dp[i][j] - Dv[qr]);
            }
            *reinterpret_cast<float4*>(&dSt[(tx + 16 * j) * QP + ty * 4]) = make_float4(g[0], g[1], g[2], g[3]);
        }
        __syncthreads();  // dS is complete

#pragma unroll 4
        for (int c = 0; c < BKV; ++c) {  // dQ += dS·K (the 1/√D at the end)
            const float4 g4 = *reinterpret_cast<const float4*>(&dSt[c * QP + ty * 4]);
            const float gg[4] = {g4.x, g4.y, g4.z, g4.w};
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) {
                const float kv = Ks[c * RP + tx + 16 * dd];
#pragma unroll
                for (int i = 0; i < 4; ++i) dq[i][dd] = fmaf(gg[i], kv, dq[i][dd]);
            }
        }
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int q = q0 + ty * 4 + i;
        if (q < S) {
#pragma unroll
            for (int dd = 0; dd < DN; ++dd) dQ[base + (size_t)q * D + tx + 16 * dd] = dq[i][dd] * scale;
        }
    }
}

// One pair of entries per head size; launch.py's TILES holds the same (BQ, BKV) and the shared
// bytes each layout needs (dynamic: over 48 KB for D = 64 and 128).
#define ENTRIES(DIM, KV_BQ, KV_BKV, Q_BQ, Q_BKV)                                                                      \
    extern "C" __global__ void __launch_bounds__(4 * KV_BKV) grad_kv_d##DIM(                                          \
        const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,                       \
        const float* __restrict__ dO, const float* __restrict__ LSE, const float* __restrict__ Dvec,                 \
        float* __restrict__ dK, float* __restrict__ dV, int S, int causal)                                           \
    {                                                                                                                 \
        grad_kv_block<DIM, KV_BQ, KV_BKV>(Q, K, V, dO, LSE, Dvec, dK, dV, S, causal);                                 \
    }                                                                                                                 \
    extern "C" __global__ void __launch_bounds__(4 * Q_BQ) grad_q_d##DIM(                                             \
        const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,                       \
        const float* __restrict__ dO, const float* __restrict__ LSE, const float* __restrict__ Dvec,                 \
        float* __restrict__ dQ, int S, int causal)                                                                   \
    {                                                                                                                 \
        grad_q_block<DIM, Q_BQ, Q_BKV>(Q, K, V, dO, LSE, Dvec, dQ, S, causal);                                        \
    }

ENTRIES(32, 64, 64, 64, 64)
ENTRIES(64, 64, 64, 64, 64)
ENTRIES(128, 32, 64, 64, 32)
