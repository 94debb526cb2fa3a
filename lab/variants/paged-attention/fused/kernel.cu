// Paged decode attention, variant `fused` of solutions/paged-attention: variant `leanpf` (the
// transposing butterfly for the scores, one exp2 per (token, head), probabilities through shared
// memory, the next block's loads in flight while the current one is computed) with two launches
// instead of three, and a wider combine:
// - no paged_plan: each warp finds its item's sequence itself (a warp scan of seq_lens, 32
//   sequences a step, from L1; ~100 instructions per 16-block item), which saves a launch and
//   its gap (~2-4 us, 2-3 % of the ~0.12-0.14 ms floors);
// - paged_combine spreads a (sequence, head)'s splits over its 4 warps, each reading whole
//   512-byte acc rows as float4, 8 in flight: a 128-split row takes 4 dependent rounds of L2
//   loads, not the solution's 16 (one thread per dim walking every split).
//
// Layout, masking and the log2-domain softmax are the solution's; see its comments.
#define MIN_WARPS 8  // one-warp blocks per SM (__launch_bounds__): = WARPS_PER_SM in launch.py

#define BLOCK 16
#define D 128
#define SPLIT_BLOCKS 16  // cache blocks per split: must match launch.py (<= 16: see the table prefetch)
#define FULL 0xffffffffu

__device__ __forceinline__ float half_lo(unsigned w)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)(w & 0xffffu)));
    return f;
}

__device__ __forceinline__ float half_hi(unsigned w)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)(w >> 16)));
    return f;
}

__device__ __forceinline__ void unpack8(const uint4 u, float* f)
{
    f[0] = half_lo(u.x); f[1] = half_hi(u.x);
    f[2] = half_lo(u.y); f[3] = half_hi(u.y);
    f[4] = half_lo(u.z); f[5] = half_hi(u.z);
    f[6] = half_lo(u.w); f[7] = half_hi(u.w);
}

__device__ __forceinline__ int nsplits(int len)
{
    return ((len + BLOCK - 1) / BLOCK + SPLIT_BLOCKS - 1) / SPLIT_BLOCKS;
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
        qr[g][0] = __shfl_sync(FULL, a.x, 2 * c) * qscale;
        qr[g][1] = __shfl_sync(FULL, a.y, 2 * c) * qscale;
        qr[g][2] = __shfl_sync(FULL, a.z, 2 * c) * qscale;
        qr[g][3] = __shfl_sync(FULL, a.w, 2 * c) * qscale;
        qr[g][4] = __shfl_sync(FULL, a.x, 2 * c + 1) * qscale;
        qr[g][5] = __shfl_sync(FULL, a.y, 2 * c + 1) * qscale;
        qr[g][6] = __shfl_sync(FULL, a.z, 2 * c + 1) * qscale;
        qr[g][7] = __shfl_sync(FULL, a.w, 2 * c + 1) * qscale;
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
    mx = head_reduce<GT, true>(mx);  // finite: a block of a split holds a token below L
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
#define STEP(KR, VR, BLK) block_step<GT>(KR, VR, BLK, L, lane, qr, acc, m[0], l[0], P)

// One warp, one work item: split sp of sequence b for query heads h0 .. h0 + GT - 1 (one KV head).
// Writes each head's split max m (log2 domain), sum l and unnormalised acc[128] at
// ((b * Hq + h) * splits + sp).
template <int GT>
__device__ __forceinline__ void split_attend(const float* __restrict__ q, const unsigned short* __restrict__ k_cache,
                                             const unsigned short* __restrict__ v_cache,
                                             const int* __restrict__ block_table, const int* __restrict__ seq_lens,
                                             float* __restrict__ part_acc, float* __restrict__ part_ml, float* P,
                                             int Hkv, int G, int max_blocks, int splits, int b, int h0, int sp)
{
    const int kvh = h0 / G;
    const int lane = threadIdx.x, chunk = lane & 15, half = lane >> 4;
    const int L = seq_lens[b];
    const int nblk = (L + BLOCK - 1) / BLOCK;
    const int first = sp * SPLIT_BLOCKS;
    const int last = min(first + SPLIT_BLOCKS, nblk);
    const int Hq = Hkv * G;

    float qr[GT][8], acc[GT][8], m[GT], l[GT];
    load_q<GT>(q, (size_t)b * Hq + h0, lane, qr);
#pragma unroll
    for (int g = 0; g < GT; ++g) {
        m[g] = -__int_as_float(0x7f800000);
        l[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
    }

    // The split's (at most 16) table entries in one load, one per lane, before the loop.
    const int mine = first + (lane & 15);
    const int entry = mine < last ? block_table[b * max_blocks + mine] : 0;
#define BASE(BLK) (((size_t)__shfl_sync(FULL, entry, (BLK) - first) * Hkv + kvh) * (BLOCK * D))
    uint4 ka[8], va[8];
    uint4 kb[8], vb[8];
    load_block(k_cache, v_cache, BASE(first), lane, ka, va);
    for (int blk = first; blk < last; blk += 2) {
        if (blk + 1 < last) load_block(k_cache, v_cache, BASE(blk + 1), lane, kb, vb);  // in flight meanwhile
        STEP(ka, va, blk);
        if (blk + 1 >= last) break;
        if (blk + 2 < last) load_block(k_cache, v_cache, BASE(blk + 2), lane, ka, va);
        STEP(kb, vb, blk + 1);
    }
#undef BASE

#pragma unroll
    for (int g = 0; g < GT; ++g) {
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(FULL, acc[g][e], 16);
        const size_t idx = ((size_t)b * Hq + h0 + g) * splits + sp;
        // Half 0 stores dims 8c..8c+3, half 1 dims 8c+4..8c+7: one 512-byte store per head.
        reinterpret_cast<float4*>(part_acc + idx * D + 8 * chunk)[half] =
            half ? make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7])
                 : make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
    }
    const float lsum = head_reduce<GT, false>(l[0]);
    const int gown = GT == 4 ? chunk >> 2 : 0;
    if (GT == 4 ? (lane & 19) == 0 : lane == 0) {
        const size_t idx = ((size_t)b * Hq + h0 + gown) * splits + sp;
        part_ml[2 * idx] = m[0];
        part_ml[2 * idx + 1] = lsum;
    }
}

// Item i of the work list (sequence b's items follow those of sequences before it; a sequence of
// n splits has n items per head group): found by the warp itself, 32 sequences per step, so no
// launch has to write the offsets first. false when i is past the last item.
__device__ __forceinline__ bool find_item(const int* __restrict__ seq_lens, int B, int HG, int i, int lane,
                                          int& b, int& j)
{
    int base = 0;
    for (int b0 = 0; b0 < B; b0 += 32) {
        const int items = b0 + lane < B ? nsplits(seq_lens[b0 + lane]) * HG : 0;
        int incl = items;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int t = __shfl_up_sync(FULL, incl, o);
            if (lane >= o) incl += t;
        }
        const int tot = __shfl_sync(FULL, incl, 31);
        if (i < base + tot) {
            const int k = __popc(__ballot_sync(FULL, base + incl <= i));  // first lane past i
            b = b0 + k;
            j = i - base - __shfl_sync(FULL, incl - items, k);
            return true;
        }
        base += tot;
    }
    return false;
}

#define SPLIT_KERNEL(GT)                                                                                      \
    extern "C" __global__ void __launch_bounds__(32, MIN_WARPS) paged_split_g##GT(                           \
        const float* __restrict__ q, const unsigned short* __restrict__ k_cache,                             \
        const unsigned short* __restrict__ v_cache, const int* __restrict__ block_table,                     \
        const int* __restrict__ seq_lens, float* __restrict__ part_acc, float* __restrict__ part_ml, int B,  \
        int Hkv, int G, int max_blocks, int splits)                                                           \
    {                                                                                                         \
        __shared__ __align__(16) float P[PWORDS(GT)];                                                         \
        int b, j;                                                                                             \
        for (int i = blockIdx.x; find_item(seq_lens, B, Hkv * G / GT, i, threadIdx.x, b, j); i += gridDim.x) { \
            const int n = nsplits(seq_lens[b]);                                                               \
            split_attend<GT>(q, k_cache, v_cache, block_table, seq_lens, part_acc, part_ml, P, Hkv, G,        \
                             max_blocks, splits, b, GT * (j / n), j % n);                                     \
        }                                                                                                     \
    }
SPLIT_KERNEL(1)
SPLIT_KERNEL(4)

// Grid (Hq, B), 128 threads: out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s over the splits
// of (b, h). The weights of up to 128 splits at a time go to shared memory; then warp w reads the
// acc rows of splits w, w + 4, ... as float4 (one 512-byte row per instruction, 8 in flight), and
// the 4 warps' sums meet in shared memory. (The solution's combine had each thread walk all the
// splits for one dim: 16 dependent rounds of 8 loads for a 128-split row, here 4.)
extern "C" __global__ void __launch_bounds__(D)
paged_combine(const float* __restrict__ part_acc, const float* __restrict__ part_ml,
              const int* __restrict__ seq_lens, float* __restrict__ out, int splits)
{
    __shared__ __align__(16) float w[D], red[D / 32], sum[4][D];
    const int h = blockIdx.x, b = blockIdx.y, Hq = gridDim.x, d = threadIdx.x;
    const int lane = d & 31, warp = d >> 5;
    const int ns = nsplits(seq_lens[b]);
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
        const int n = min(D, ns - c);
        const float4* a = reinterpret_cast<const float4*>(part_acc + (row + c) * D) + lane;
#pragma unroll 8
        for (int j = warp; j < n; j += 4) {
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
