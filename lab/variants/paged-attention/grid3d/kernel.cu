// Paged decode attention, flash-decoding style: one warp per (sequence, group of query heads of one
// KV head, split of 256 tokens) computes a partial softmax-weighted sum for the group; a second
// launch combines the splits of each (sequence, query head).
//
// Why the split: a decode batch is B sequences x Hkv KV heads of work. At B = 4, Hkv = 8 that is 32
// warps for 132 SMs if each owns a whole sequence, and a 32k-token sequence is 16 MB of K and V
// streamed by one warp. Splitting every sequence into 256-token pieces makes the parallelism follow
// the tokens (4 x 8 x 128 warps there), and the second launch reads only ~0.5 KB per split.
//
// Why GQA inside the warp: the G = Hq / Hkv query heads that share a KV head read the same K and V
// bytes, so one warp holds GT of them (GT = 4 when 4 divides G) in registers and reads each cache
// block once for all of them, not once per query head. (G = 1 or 2 takes GT = 1: a second
// instantiation for G = 2 would cost compile time for no bench shape.)
//
// The indirection: block_table[b][j] names the physical block holding tokens 16j..16j+15 of
// sequence b; blocks are scattered (and shared across sequences: a common prefix). A block of one
// KV head is 16 x 128 fp16 = 4 KB contiguous ([num_blocks][Hkv][16][128]), so a warp reads it
// with eight fully coalesced 16-byte loads per lane, all issued before any is used.
//
// Lane layout inside a block: load i gives lane l the 16-byte chunk l & 15 (dims 8c..8c+7) of token
// 2i + (l >> 4); lane l keeps q's dims 8c..8c+7 for each head, so its 8 products need no shuffle and
// a 16-lane xor-reduction finishes each score. Each lane then accumulates p * V for its own dims and
// its own token parity; the two halves of the warp are summed once, at the end.
//
// Slots past a sequence's length hold garbage (NaN here): their scores are masked to -inf AND their
// values are skipped, because p = 0 times NaN is NaN. Scores are kept in the log2 domain (q is
// pre-scaled by log2(e)/sqrt(D)) so each probability is one exp2f.
#define BLOCK 16
#define D 128
#define SPLIT_BLOCKS 16  // cache blocks per split: must match launch.py

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

// Grid (splits, Hq / GT, B), one warp per block: query heads GT * blockIdx.y .. + GT - 1, which
// share KV head GT * blockIdx.y / G. Writes, for each of them, the split's running max m (log2
// domain), its sum l of exp2(s - m) and its unnormalised output acc[128].
template <int GT>
__device__ __forceinline__ void split_attend(const float* __restrict__ q, const unsigned short* __restrict__ k_cache,
                                             const unsigned short* __restrict__ v_cache,
                                             const int* __restrict__ block_table, const int* __restrict__ seq_lens,
                                             float* __restrict__ part_acc, float* __restrict__ part_ml,
                                             int Hkv, int G, int max_blocks)
{
    const int sp = blockIdx.x, h0 = GT * blockIdx.y, b = blockIdx.z, splits = gridDim.x;
    const int kvh = h0 / G;
    const int lane = threadIdx.x, chunk = lane & 15, half = lane >> 4;
    const int L = seq_lens[b];
    const int nblk = (L + BLOCK - 1) / BLOCK;
    const int first = sp * SPLIT_BLOCKS;
    if (first >= nblk) return;  // this sequence is shorter than the widest one: no work here
    const int last = min(first + SPLIT_BLOCKS, nblk);
    const int Hq = Hkv * G;

    float qr[GT][8], acc[GT][8], m[GT], l[GT];
    const float qscale = 1.4426950408889634f * 0.08838834764831845f;  // log2(e) / sqrt(128)
#pragma unroll
    for (int g = 0; g < GT; ++g) {
        const float4* qp = reinterpret_cast<const float4*>(q + ((size_t)b * Hq + h0 + g) * D + 8 * chunk);
        const float4 a = qp[0], c = qp[1];
        qr[g][0] = a.x * qscale; qr[g][1] = a.y * qscale; qr[g][2] = a.z * qscale; qr[g][3] = a.w * qscale;
        qr[g][4] = c.x * qscale; qr[g][5] = c.y * qscale; qr[g][6] = c.z * qscale; qr[g][7] = c.w * qscale;
        m[g] = -__int_as_float(0x7f800000);
        l[g] = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] = 0.0f;
    }

    // The split's (at most 16) table entries in one load, one per lane, before the loop: read
    // inside it, each block's address would wait on a dependent table load first.
    const int mine = first + (lane & 15);
    const int entry = mine < last ? block_table[b * max_blocks + mine] : 0;
    for (int blk = first; blk < last; ++blk) {
        const int phys = __shfl_sync(0xffffffffu, entry, blk - first);
        const size_t base = ((size_t)phys * Hkv + kvh) * (BLOCK * D);
        const uint4* kp = reinterpret_cast<const uint4*>(k_cache + base);
        const uint4* vp = reinterpret_cast<const uint4*>(v_cache + base);
        uint4 kr[8], vr[8];
#pragma unroll
        for (int i = 0; i < 8; ++i) kr[i] = kp[i * 32 + lane];
#pragma unroll
        for (int i = 0; i < 8; ++i) vr[i] = vp[i * 32 + lane];  // in flight while the scores are made

        float s[GT][8];
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            float kf[8];
            unpack8(kr[i], kf);
#pragma unroll
            for (int g = 0; g < GT; ++g) {
                float t = 0.0f;
#pragma unroll
                for (int e = 0; e < 8; ++e) t = fmaf(qr[g][e], kf[e], t);
                s[g][i] = t;
            }
        }
        // Finish each score over the 16 lanes of a half-warp (they hold the 16 chunks of one token).
#pragma unroll
        for (int o = 8; o > 0; o >>= 1) {
#pragma unroll
            for (int g = 0; g < GT; ++g) {
#pragma unroll
                for (int i = 0; i < 8; ++i) s[g][i] += __shfl_xor_sync(0xffffffffu, s[g][i], o);
            }
        }
        const int t0 = blk * BLOCK + half;  // this lane's token in load i is t0 + 2i
#pragma unroll
        for (int g = 0; g < GT; ++g) {
            float mx = m[g];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                if (t0 + 2 * i >= L) s[g][i] = -__int_as_float(0x7f800000);
                mx = fmaxf(mx, s[g][i]);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));  // both halves share one max
            const float corr = exp2f(m[g] - mx);  // 0 on the first block (m = -inf)
            m[g] = mx;
            l[g] *= corr;
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[g][e] *= corr;
        }
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            if (t0 + 2 * i >= L) continue;  // never touch a value past the length: it may be NaN
            float vf[8];
            unpack8(vr[i], vf);
#pragma unroll
            for (int g = 0; g < GT; ++g) {
                const float p = exp2f(s[g][i] - m[g]);
                l[g] += p;
#pragma unroll
                for (int e = 0; e < 8; ++e) acc[g][e] = fmaf(p, vf[e], acc[g][e]);
            }
        }
    }

    // Sum the two token parities, then lanes 0-15 write their 8 dims of every head.
#pragma unroll
    for (int g = 0; g < GT; ++g) {
        l[g] += __shfl_xor_sync(0xffffffffu, l[g], 16);
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[g][e] += __shfl_xor_sync(0xffffffffu, acc[g][e], 16);
        const size_t idx = ((size_t)b * Hq + h0 + g) * splits + sp;
        // Both halves hold the sums now: half 0 stores dims 8c..8c+3, half 1 dims 8c+4..8c+7, so
        // one store instruction writes the 512 contiguous bytes of the head's row.
        reinterpret_cast<float4*>(part_acc + idx * D + 8 * chunk)[half] =
            half ? make_float4(acc[g][4], acc[g][5], acc[g][6], acc[g][7])
                 : make_float4(acc[g][0], acc[g][1], acc[g][2], acc[g][3]);
        if (lane == 0) {
            part_ml[2 * idx] = m[g];
            part_ml[2 * idx + 1] = l[g];
        }
    }
}

#define SPLIT_KERNEL(GT)                                                                                      \
    extern "C" __global__ void __launch_bounds__(32) paged_split_g##GT(                                      \
        const float* __restrict__ q, const unsigned short* __restrict__ k_cache,                             \
        const unsigned short* __restrict__ v_cache, const int* __restrict__ block_table,                     \
        const int* __restrict__ seq_lens, float* __restrict__ part_acc, float* __restrict__ part_ml, int Hkv, \
        int G, int max_blocks)                                                                                \
    {                                                                                                         \
        split_attend<GT>(q, k_cache, v_cache, block_table, seq_lens, part_acc, part_ml, Hkv, G, max_blocks);  \
    }
SPLIT_KERNEL(1)
SPLIT_KERNEL(4)

// Grid (Hq, B), 128 threads: out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s over the splits
// of (b, h), M the largest m_s. A 32k-token sequence has 128 splits: read one after another, each
// waiting for the last, they would cost ~100 us of L2 round trips. Instead the threads share the
// splits' (m, l) (one per thread, block reductions), keep 128 weights in shared memory, and each
// thread d then reads acc_s[d] for eight splits at a time: coalesced rows, eight loads in flight.
extern "C" __global__ void __launch_bounds__(D)
paged_combine(const float* __restrict__ part_acc, const float* __restrict__ part_ml,
              const int* __restrict__ seq_lens, float* __restrict__ out, int splits)
{
    __shared__ float w[D], red[D / 32];
    const int h = blockIdx.x, b = blockIdx.y, Hq = gridDim.x, d = threadIdx.x;
    const int lane = d & 31, warp = d >> 5;
    const int nblk = (seq_lens[b] + BLOCK - 1) / BLOCK;
    const int ns = (nblk + SPLIT_BLOCKS - 1) / SPLIT_BLOCKS;  // splits this sequence filled
    const size_t row = ((size_t)b * Hq + h) * splits;
    float M = -__int_as_float(0x7f800000);
    for (int s = d; s < ns; s += D) M = fmaxf(M, part_ml[2 * (row + s)]);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
    if (lane == 0) red[warp] = M;
    __syncthreads();
    M = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
    float num = 0.0f, den = 0.0f;
    for (int c = 0; c < ns; c += D) {
        __syncthreads();  // the previous chunk's weights (and red) have been read
        if (c + d < ns) {
            const float ws = exp2f(part_ml[2 * (row + c + d)] - M);
            w[d] = ws;
            den = fmaf(ws, part_ml[2 * (row + c + d) + 1], den);  // this thread's share of den
        }
        __syncthreads();
        const int n = min(D, ns - c);
        const float* a = part_acc + (row + c) * D + d;
#pragma unroll 8
        for (int j = 0; j < n; ++j) num = fmaf(w[j], a[(size_t)j * D], num);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) den += __shfl_xor_sync(0xffffffffu, den, o);
    __syncthreads();
    if (lane == 0) red[warp] = den;
    __syncthreads();
    den = (red[0] + red[1]) + (red[2] + red[3]);
    out[((size_t)b * Hq + h) * D + d] = num / den;
}
