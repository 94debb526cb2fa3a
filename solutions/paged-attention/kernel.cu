// Paged decode attention, flash-decoding style with the work dealt by cache blocks: a grid of
// one-warp blocks cuts the (sequence, head group, cache block) list into equal runs; each warp
// writes a partial softmax-weighted sum per piece of its run for a group of query heads sharing one
// KV head, and a second launch combines the partials of each (sequence, query head).
//
// Measured 2026-12-01 on an NVIDIA H200 (lab/quick_time.py, the kata's two bench cases):
// B = 64 power-law lengths to 32k: 193.4 us, 70.6 % of the roofline; B = 4 x 32k tokens: 146.1 us,
// 83.1 %; the full GPU grade: PASS, 21 cases, 78 % of the roofline ("good"). The previous solution
// (256-token splits dealt round-robin after a plan launch, now lab/variants/paged-attention/
// previous) made 57.6 % / 61.5 %. This file compiles to the same SASS as the variant timed
// (`balanced`, now only in git history); the H200's ptxas gave it 255 registers and 12 B of
// spills, outside the block loop. lab/variants/NOTES-serving.md has each step's prediction and
// its result.
//
// Why split the sequences: B x Hkv is 32 warps at B = 4, Hkv = 8, for 132 SMs, and a 32k-token
// sequence is 16 MB of K and V for one warp. Cut into runs of blocks, the parallelism follows the
// tokens, and the combine reads only ~0.5 KB per partial.
//
// Why equal runs, not fixed splits: the block loop is latency-bound, so the busiest warp sets the
// time. 16-block splits dealt round-robin leave the busiest warp of the power-law batch 80 blocks
// against a mean of 70. Here the list (sequences in order, head groups inside, blocks inside
// those) is cut into runs of C = max(16, ceil(total / warps)) blocks: warp w takes positions
// [w C, (w + 1) C). Where a run crosses a (sequence, head group) boundary the warp writes one
// partial per piece, in slot w - w0 of that row (w0: the warp holding the row's first block), so a
// row of n blocks has at most ceil(n / 16) + 1 partials and the combine finds them by the same
// arithmetic: no plan launch, no work list. A 32k-token row has ~34 partials, not 128. On the
// equal case that is most of the gain over fixed splits (160.5 -> 146.1 us): a warp starts one or
// two runs, not four (a start is q, a table window and a first block nothing overlaps), and a
// quarter of the partials are written and combined. The known cost: the power-law batch's
// one-block sequences cut some warps' runs into up to 36 pieces, each a start, which leaves it
// 4.7 % behind fixed splits (NOTES-serving.md).
//
// Why GQA inside the warp: the G query heads sharing a KV head read the same K and V bytes, so a
// warp holds GT = 4 of them (when 4 divides G; G = 1 or 2 takes GT = 1) in registers and reads each
// block once for all of them. (A GT = 2 instantiation would cost compile time for no bench shape.)
//
// The indirection and the loads: block_table[b][j] names the physical block of tokens 16j..16j+15;
// blocks are scattered and shared (a common prefix). One KV head's block is 16 x 128 fp16 = 4 KB
// contiguous, read with eight coalesced 16-byte loads per lane for K and eight for V. The next
// block's 16 loads are issued before the current block is computed (double buffering: ~250
// registers, 8 warps per SM), and table entries come 32 at a time, a window ahead, so no block
// address waits on a table load.
//
// The scores: load i gives lane l the chunk c = l & 15 (dims 8c..8c+7) of token 2i + (l >> 4); the
// lane keeps q's dims 8c..8c+7, so its products need no shuffle. Its GT x 8 partial scores are
// finished by a transposing butterfly (each level sends half the values and keeps half: 30
// shuffles for GT = 4 instead of 128), after which a lane holds whole scores of one head: one exp2
// per (token, head). p and the rescale factors reach the other lanes through 304 B of shared memory.
//
// Slots past a sequence's length hold garbage (NaN here): their scores are masked to -inf AND their
// values are skipped, because p = 0 times NaN is NaN. Scores are kept in the log2 domain (q is
// pre-scaled by log2(e)/sqrt(D)) so each probability is one exp2f.
#define MIN_WARPS 8  // one-warp blocks per SM (__launch_bounds__): = WARPS_PER_SM in launch.py
#define BLOCK 16
#define D 128
#define MIN_RUN 16  // the shortest run but a list's last: launch.py sizes the partial slots by it
#define FULL 0xffffffffu

__device__ __forceinline__ float h2f(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ void unpack8(const uint4 u, float* f)  // a 16-byte chunk's 8 fp16
{
    const unsigned w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        f[2 * k] = h2f(w[k] & 0xffffu);
        f[2 * k + 1] = h2f(w[k] >> 16);
    }
}

// Lane l of a half-warp (chunk c = l & 15) works on dims 8c..8c+7. q's row is read coalesced
// (lane l takes float4 l of the 512-byte row) and the two float4 a lane needs (2c, 2c + 1) come
// from lanes 2c and 2c + 1: one 16-sector request per head instead of two of 16 sectors each.
template <int GT>
__device__ __forceinline__ void load_q(const float* __restrict__ q, size_t row0, int lane, float (&qr)[GT][8])
{
    const float qscale = 1.4426950408889634f * 0.08838834764831845f;  // log2(e) / sqrt(128)
    const int c = lane & 15;
#pragma unroll
    for (int g = 0; g < GT; ++g) {
        const float4 a = reinterpret_cast<const float4*>(q + (row0 + g) * D)[lane];
        const float v[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
        for (int k = 0; k < 8; ++k) qr[g][k] = __shfl_sync(FULL, v[k & 3], 2 * c + (k >> 2)) * qscale;
    }
}

// Load i gives lane l the 16-byte chunk l & 15 of token 2i + (l >> 4) of a 4 KB cache block.
__device__ __forceinline__ void load_block(const unsigned short* __restrict__ k_cache,
                                           const unsigned short* __restrict__ v_cache, size_t base, int lane,
                                           uint4 (&kr)[8], uint4 (&vr)[8])
{
    const uint4* kp = reinterpret_cast<const uint4*>(k_cache + base);
    const uint4* vp = reinterpret_cast<const uint4*>(v_cache + base);
#pragma unroll
    for (int i = 0; i < 8; ++i) kr[i] = kp[i * 32 + lane];
#pragma unroll
    for (int i = 0; i < 8; ++i) vr[i] = vp[i * 32 + lane];
}

// Per-lane partial scores s[g * 8 + i] (head g, token 2i + half) for the block's 16 tokens.
template <int GT>
__device__ __forceinline__ void partial_scores(const uint4 (&kr)[8], const float (&qr)[GT][8], float* s)
{
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        float kf[8];
        unpack8(kr[i], kf);
#pragma unroll
        for (int g = 0; g < GT; ++g) {
            float t = 0.0f;
#pragma unroll
            for (int e = 0; e < 8; ++e) t = fmaf(qr[g][e], kf[e], t);
            s[g * 8 + i] = t;
        }
    }
}

// One butterfly level over lane bit o: the lane with that bit set keeps the upper half of its N
// values, the other the lower half, and each adds what its partner sent. After the levels
// o = 8, 4, 2, 1 value k of lane c is the full sum of original value k + N_last * c.
template <int N>
__device__ __forceinline__ void halve(float* s, int o, bool up)
{
#pragma unroll
    for (int k = 0; k < N / 2; ++k) {
        const float send = up ? s[k] : s[k + N / 2];
        const float keep = up ? s[k + N / 2] : s[k];
        s[k] = keep + __shfl_xor_sync(FULL, send, o);
    }
}

// Lanes holding the same head's tokens: xor over these bits (GT = 4: chunks 4g..4g+3 and both
// halves; GT = 1: every chunk pair, lanes c and c ^ 1 holding the same value).
template <int GT, bool MAX>
__device__ __forceinline__ float head_reduce(float x)
{
    if constexpr (GT == 4) {
#pragma unroll
        for (int o : {1, 2, 16}) {
            const float y = __shfl_xor_sync(FULL, x, o);
            x = MAX ? fmaxf(x, y) : x + y;
        }
    } else {
#pragma unroll
        for (int o : {2, 4, 8, 16}) {
            const float y = __shfl_xor_sync(FULL, x, o);
            x = MAX ? fmaxf(x, y) : x + y;
        }
    }
    return x;
}

#define PSTRIDE(GT) ((GT) * 8 + 4)  // per half-warp; + 4 floats so the halves' float4 reads hit other banks
#define PWORDS(GT) (2 * PSTRIDE(GT) + 4)

// One cache block. Lane (half h, chunk c) keeps m and l of its own head only (GT = 4: head c / 4,
// tokens 2(c % 4) + e; GT = 1: token c / 2); acc holds all GT heads for dims 8c..8c+7, parity h.
template <int GT>
__device__ __forceinline__ void block_step(const uint4 (&kr)[8], const uint4 (&vr)[8], int blk, int L, int lane,
                                           const float (&qr)[GT][8], float (&acc)[GT][8], float& m, float& l,
                                           float* P)
{
    const int chunk = lane & 15, half = lane >> 4;
    float s[GT * 8];
    partial_scores<GT>(kr, qr, s);
    constexpr int R = GT == 4 ? 2 : 1;
    if constexpr (GT == 4) {
        halve<32>(s, 8, chunk & 8);
        halve<16>(s, 4, chunk & 4);
        halve<8>(s, 2, chunk & 2);
        halve<4>(s, 1, chunk & 1);
    } else {
        halve<8>(s, 8, chunk & 8);
        halve<4>(s, 4, chunk & 4);
        halve<2>(s, 2, chunk & 2);
        s[0] += __shfl_xor_sync(FULL, s[0], 1);
    }
    const int i0 = GT == 4 ? 2 * (chunk & 3) : chunk >> 1;  // this lane's first token index i
    const int t0 = blk * BLOCK + half;                       // token of index i is t0 + 2i
    float mx = m;
#pragma unroll
    for (int e = 0; e < R; ++e) {
        if (t0 + 2 * (i0 + e) >= L) s[e] = -__int_as_float(0x7f800000);  // may be NaN: mask it
        mx = fmaxf(mx, s[e]);
    }
    mx = head_reduce<GT, true>(mx);  // finite: every block of a run holds a token below L
    const float corr = exp2f(m - mx);  // 0 on the first block (m = -inf)
    m = mx;
    float p[R], ps = 0.0f;
#pragma unroll
    for (int e = 0; e < R; ++e) {
        p[e] = exp2f(s[e] - mx);
        ps += p[e];
    }
    l = fmaf(l, corr, ps);

    float* Ph = P + half * PSTRIDE(GT);
    float* C = P + 2 * PSTRIDE(GT);
    __syncwarp();  // every lane has read the previous block's P and C
    if constexpr (GT == 4) {
        reinterpret_cast<float2*>(Ph)[chunk] = make_float2(p[0], p[1]);  // values 2c, 2c + 1
        if ((lane & 19) == 0) C[chunk >> 2] = corr;
    } else {
        if ((chunk & 1) == 0) Ph[chunk >> 1] = p[0];
        if (lane == 0) C[0] = corr;
    }
    __syncwarp();
    float pv[GT][8], cr[GT];
    if constexpr (GT == 4) {
        const float4 c4 = *reinterpret_cast<const float4*>(C);
        cr[0] = c4.x; cr[1] = c4.y; cr[2] = c4.z; cr[3] = c4.w;
    } else {
        cr[0] = C[0];
    }
#pragma unroll
    for (int g = 0; g < GT; ++g) {
        const float4 a = reinterpret_cast<const float4*>(Ph + g * 8)[0];
        const float4 b = reinterpret_cast<const float4*>(Ph + g * 8)[1];
        pv[g][0] = a.x; pv[g][1] = a.y; pv[g][2] = a.z; pv[g][3] = a.w;
        pv[g][4] = b.x; pv[g][5] = b.y; pv[g][6] = b.z; pv[g][7] = b.w;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] *= cr[g];
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        if (t0 + 2 * i >= L) continue;  // never touch a value past the length: it may be NaN
        float vf[8];
        unpack8(vr[i], vf);
#pragma unroll
        for (int g = 0; g < GT; ++g) {
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(pv[g][i], vf[e], acc[g][e]);
        }
    }
}
#define STEP(KR, VR, BLK) block_step<GT>(KR, VR, BLK, L, lane, qr, acc, m, l, P)

// One warp, one run: blocks j0 .. j0 + len - 1 of sequence b for query heads h0 .. h0 + GT - 1 (one
// KV head). Writes each head's m (log2 domain), l and unnormalised acc[128] at slot
// ((b * Hq + h) * splits + slot).
template <int GT>
__device__ __forceinline__ void run_attend(const float* __restrict__ q, const unsigned short* __restrict__ k_cache,
                                           const unsigned short* __restrict__ v_cache,
                                           const int* __restrict__ block_table, int L, float* __restrict__ part_acc,
                                           float* __restrict__ part_ml, float* P, int Hkv, int G, int max_blocks,
                                           int splits, int b, int h0, int j0, int len, int slot)
{
    const int kvh = h0 / G;
    const int lane = threadIdx.x, chunk = lane & 15, half = lane >> 4;
    const int Hq = Hkv * G;
    const int end = j0 + len;

    float qr[GT][8], acc[GT][8] = {}, m = -__int_as_float(0x7f800000), l = 0.0f;  // m, l: this lane's head
    load_q<GT>(q, (size_t)b * Hq + h0, lane, qr);

    // Table entries in windows of 32, one per lane: `ent` holds blocks eb .. eb + 31, `nxt` the next
    // 32, loaded a window ahead so that no block address waits on a table load inside the run.
    const int* tb = block_table + (size_t)b * max_blocks;
    int eb = j0;
    int ent = j0 + lane < end ? tb[j0 + lane] : 0;
    int nxt = j0 + 32 + lane < end ? tb[j0 + 32 + lane] : 0;
#define ADVANCE(J)                                                   \
    if ((J) - eb >= 32) {                                            \
        ent = nxt;                                                   \
        eb += 32;                                                    \
        nxt = eb + 32 + lane < end ? tb[eb + 32 + lane] : 0;         \
    }
#define BASE(J) (((size_t)__shfl_sync(FULL, (J) - eb < 32 ? ent : nxt, ((J) - eb) & 31) * Hkv + kvh) * (BLOCK * D))
    uint4 ka[8], va[8], kb[8], vb[8];
    load_block(k_cache, v_cache, BASE(j0), lane, ka, va);
    for (int blk = j0; blk < end; blk += 2) {
        ADVANCE(blk);
        if (blk + 1 < end) load_block(k_cache, v_cache, BASE(blk + 1), lane, kb, vb);  // in flight meanwhile
        STEP(ka, va, blk);
        if (blk + 1 >= end) break;
        ADVANCE(blk + 1);
        if (blk + 2 < end) load_block(k_cache, v_cache, BASE(blk + 2), lane, ka, va);
        STEP(kb, vb, blk + 1);
    }
#undef BASE
#undef ADVANCE

#pragma unroll
    for (int g = 0; g < GT; ++g) {
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(FULL, acc[g][e], 16);
        const size_t idx = ((size_t)b * Hq + h0 + g) * splits + slot;
        // Half 0 stores dims 8c..8c+3, half 1 dims 8c+4..8c+7: one 512-byte store per head.
        reinterpret_cast<float4*>(part_acc + idx * D + 8 * chunk)[half] =
            half ? make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7])
                 : make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
    }
    const float lsum = head_reduce<GT, false>(l);
    const int gown = GT == 4 ? chunk >> 2 : 0;
    if (GT == 4 ? (lane & 19) == 0 : lane == 0) {
        const size_t idx = ((size_t)b * Hq + h0 + gown) * splits + slot;
        reinterpret_cast<float2*>(part_ml)[idx] = make_float2(m, lsum);  // (m, l): one 8-byte store
    }
}

__device__ __forceinline__ int nblocks(int len) { return (len + BLOCK - 1) / BLOCK; }

// The list's length: HG x the blocks of all sequences (a warp sum, 32 sequences per step).
__device__ __forceinline__ int list_total(const int* __restrict__ seq_lens, int B, int HG, int lane)
{
    int t = 0;
    for (int b = lane; b < B; b += 32) t += nblocks(seq_lens[b]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(FULL, t, o);
    return t * HG;
}

// The sequence b holding list position u (< the total), and ub, the position of its first block.
__device__ __forceinline__ void find_seq(const int* __restrict__ seq_lens, int B, int HG, int u, int lane, int& b,
                                         int& ub)
{
    int base = 0;
    for (int b0 = 0;; b0 += 32) {
        const int items = b0 + lane < B ? nblocks(seq_lens[b0 + lane]) * HG : 0;
        int incl = items;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int t = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += t;
        }
        const int tot = __shfl_sync(FULL, incl, 31);
        if (u < base + tot) {
            const int k = __popc(__ballot_sync(FULL, base + incl <= u));  // first lane past u
            b = b0 + k;
            ub = base + __shfl_sync(FULL, incl - items, k);
            return;
        }
        base += tot;
    }
}

__device__ __forceinline__ int run_length(int total, int warps) { return max(MIN_RUN, (total + warps - 1) / warps); }

#define SPLIT_KERNEL(GT)                                                                                      \
    extern "C" __global__ void __launch_bounds__(32, MIN_WARPS) paged_split_g##GT(                           \
        const float* __restrict__ q, const unsigned short* __restrict__ k_cache,                             \
        const unsigned short* __restrict__ v_cache, const int* __restrict__ block_table,                     \
        const int* __restrict__ seq_lens, float* __restrict__ part_acc, float* __restrict__ part_ml, int B,  \
        int Hkv, int G, int max_blocks, int splits)                                                           \
    {                                                                                                         \
        __shared__ __align__(16) float P[PWORDS(GT)];                                                         \
        const int HG = Hkv * G / GT, lane = threadIdx.x, w = blockIdx.x;                                     \
        const int total = list_total(seq_lens, B, HG, lane);                                                  \
        const int C = run_length(total, gridDim.x);                                                           \
        const int u_end = min(total, (w + 1) * C);                                                            \
        int u = w * C, b, ub;                                                                                 \
        if (u >= u_end) return;                                                                               \
        find_seq(seq_lens, B, HG, u, lane, b, ub);                                                            \
        while (u < u_end) {                                                                                   \
            const int L = seq_lens[b], n = nblocks(L);                                                        \
            if (u - ub >= HG * n) { ub += HG * n; ++b; continue; }                                            \
            const int hg = (u - ub) / n, j0 = (u - ub) % n, len = min(n - j0, u_end - u);                     \
            run_attend<GT>(q, k_cache, v_cache, block_table, L, part_acc, part_ml, P, Hkv, G, max_blocks,     \
                           splits, b, GT * hg, j0, len, w - (ub + hg * n) / C);                               \
            u += len;                                                                                         \
        }                                                                                                     \
    }
SPLIT_KERNEL(1)
SPLIT_KERNEL(4)

// Grid (Hq, B), 128 threads: out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s over the
// partials of (b, h): the runs of warps w0 .. w1, w0 and w1 the warps holding the first and the
// last block of the row's list segment (same arithmetic as the split kernel; `warps` is its grid).
// The weights of up to 128 partials at a time go to shared memory; then warp v reads the acc rows
// of partials v, v + 4, ... as float4 (one 512-byte row per instruction, 8 in flight), and the 4
// warps' sums meet in shared memory.
extern "C" __global__ void __launch_bounds__(D)
paged_combine(const float* __restrict__ part_acc, const float* __restrict__ part_ml,
              const int* __restrict__ seq_lens, float* __restrict__ out, int B, int gt, int splits, int warps)
{
    __shared__ __align__(16) float w[D], sum[4][D];
    __shared__ float red[D / 32];
    __shared__ int ired[2][D / 32];
    const int h = blockIdx.x, b = blockIdx.y, Hq = gridDim.x, d = threadIdx.x;
    const int lane = d & 31, warp = d >> 5, HG = Hq / gt;
    // The list position of this row's segment: HG x the blocks of the sequences before b, then
    // (h / gt) x n; and the list's total, for the run length C.
    int before = 0, all = 0;
    for (int s = d; s < B; s += D) {
        const int n = nblocks(seq_lens[s]);
        all += n;
        before += s < b ? n : 0;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        before += __shfl_xor_sync(FULL, before, o);
        all += __shfl_xor_sync(FULL, all, o);
    }
    if (lane == 0) {
        ired[0][warp] = before;
        ired[1][warp] = all;
    }
    __syncthreads();
    before = ired[0][0] + ired[0][1] + ired[0][2] + ired[0][3];
    all = ired[1][0] + ired[1][1] + ired[1][2] + ired[1][3];
    const int n = nblocks(seq_lens[b]);
    const int C = run_length(all * HG, warps);
    const int start = before * HG + (h / gt) * n;
    const int ns = (start + n - 1) / C - start / C + 1;  // partials of this row
    const size_t row = ((size_t)b * Hq + h) * splits;
    float M = -__int_as_float(0x7f800000);
    for (int s = d; s < ns; s += D) M = fmaxf(M, part_ml[2 * (row + s)]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(FULL, M, o));
    if (lane == 0) red[warp] = M;
    __syncthreads();
    M = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
    float den = 0.0f;
    float4 num = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int c = 0; c < ns; c += D) {
        __syncthreads();  // the previous chunk's weights (and red) have been read
        if (c + d < ns) {
            const float ws = exp2f(part_ml[2 * (row + c + d)] - M);
            w[d] = ws;
            den = fmaf(ws, part_ml[2 * (row + c + d) + 1], den);
        }
        __syncthreads();
        const int cnt = min(D, ns - c);
        const float4* a = reinterpret_cast<const float4*>(part_acc + (row + c) * D) + lane;
#pragma unroll 8
        for (int j = warp; j < cnt; j += 4) {
            const float4 x = a[(size_t)j * (D / 4)];
            const float ws = w[j];
            num.x = fmaf(ws, x.x, num.x); num.y = fmaf(ws, x.y, num.y);
            num.z = fmaf(ws, x.z, num.z); num.w = fmaf(ws, x.w, num.w);
        }
    }
    reinterpret_cast<float4*>(sum[warp])[lane] = num;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) den += __shfl_xor_sync(FULL, den, o);
    __syncthreads();
    if (lane == 0) red[warp] = den;
    __syncthreads();
    den = (red[0] + red[1]) + (red[2] + red[3]);
    out[((size_t)b * Hq + h) * D + d] = ((sum[0][d] + sum[1][d]) + (sum[2][d] + sum[3][d])) / den;
}
