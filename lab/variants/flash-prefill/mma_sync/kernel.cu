// O = softmax(Q·Kᵀ/√D, optional causal mask)·V on tensor cores: FlashAttention-2's forward pass
//   for prefill. Q, K, V, O are bf16 B×H×S×D (D = 64 or 128); scores and sums are float32.
// A block owns 64 query rows of one (batch, head): 4 warps of 16 rows each. Key tiles of 64 rows
//   of K and V are staged in shared memory (zeros past S); per tile a warp computes its 16 × 64
//   scores with mma.sync.m16n8k16 (Q fragments from registers, K fragments straight from shared
//   memory: K stored [key][d] is the "col" B operand as it stands), updates the online softmax
//   (running max m and sum l per row, the accumulator rescaled by exp2(m_old - m_new)), and adds
//   P·V with a second mma: the float scores of two neighbouring n8 tiles are, once rounded to
//   bf16, exactly an m16n8k16 A fragment, so P never leaves registers.
// Rows: lane (g = lane / 4, t = lane % 4) holds rows g and g + 8 of its warp's 16; a row's 64
//   scores are spread over the 4 lanes of a quad, so row max and sum take two shuffles.
// Causal: key tiles past the block's last query are skipped; inside a tile keys > query are -inf.
// Scores are kept in log2 units (scale = log2(e) / sqrt(D)), so each probability is one exp2f.
#include <cuda_bf16.h>

#define BQ 64
#define BKEYS 64
#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&v);
}

__device__ __forceinline__ void mma_bf16(float* d, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <int D>
__device__ void flash_block(const unsigned short* __restrict__ Q, const unsigned short* __restrict__ K,
                            const unsigned short* __restrict__ V, unsigned short* __restrict__ O, int S, int causal)
{
    constexpr int ROW = D + 8;  // halves per shared row (padded: fragment loads hit distinct banks)
    __shared__ __align__(16) unsigned short sK[BKEYS * ROW], sV[BKEYS * ROW];
    unsigned short* sQ = sK;  // Q passes through the K tile's memory on its way to registers
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    const int q0 = blockIdx.x * BQ;
    const size_t base = (size_t)blockIdx.y * S * D;
    const float scale = 1.44269504f * rsqrtf((float)D);

    for (int c = tid; c < BQ * D / 8; c += blockDim.x) {  // the Q tile, 16 bytes a step
        int r = c / (D / 8), col = (c % (D / 8)) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (q0 + r < S) v = *reinterpret_cast<const uint4*>(Q + base + (size_t)(q0 + r) * D + col);
        *reinterpret_cast<uint4*>(sQ + r * ROW + col) = v;
    }
    __syncthreads();
    unsigned qa[D / 16][4];  // this warp's 16 rows of Q as m16n8k16 A fragments, one per 16 of d
    const int wr = warp * 16;
#pragma unroll
    for (int ks = 0; ks < D / 16; ks++) {
        const unsigned short* p = sQ + (wr + g) * ROW + ks * 16 + 2 * t;
        qa[ks][0] = *reinterpret_cast<const unsigned*>(p);
        qa[ks][1] = *reinterpret_cast<const unsigned*>(p + 8 * ROW);
        qa[ks][2] = *reinterpret_cast<const unsigned*>(p + 8);
        qa[ks][3] = *reinterpret_cast<const unsigned*>(p + 8 * ROW + 8);
    }
    __syncthreads();  // every warp has its Q fragments before the first K tile overwrites them
    float o[D / 8][4] = {};
    float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.0f, 0.0f};
    const int rows[2] = {q0 + wr + g, q0 + wr + g + 8};
    const int kend = causal ? min(S, q0 + BQ) : S;

    for (int k0 = 0; k0 < kend; k0 += BKEYS) {
        for (int c = tid; c < BKEYS * D / 8; c += blockDim.x) {  // K and V tiles, zeros past S
            int r = c / (D / 8), col = (c % (D / 8)) * 8;
            uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
            if (k0 + r < S) {
                kv = *reinterpret_cast<const uint4*>(K + base + (size_t)(k0 + r) * D + col);
                vv = *reinterpret_cast<const uint4*>(V + base + (size_t)(k0 + r) * D + col);
            }
            *reinterpret_cast<uint4*>(sK + r * ROW + col) = kv;
            *reinterpret_cast<uint4*>(sV + r * ROW + col) = vv;
        }
        __syncthreads();  // the tiles are in shared memory for every warp
        float s[BKEYS / 8][4];
#pragma unroll
        for (int j = 0; j < BKEYS / 8; j++) {
            s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
            for (int ks = 0; ks < D / 16; ks++) {
                const unsigned short* p = sK + (j * 8 + g) * ROW + ks * 16 + 2 * t;
                mma_bf16(s[j], qa[ks], *reinterpret_cast<const unsigned*>(p), *reinterpret_cast<const unsigned*>(p + 8));
            }
        }
        // Mask (keys past S; with causal, keys after the query) and the tile's row maxima.
        float mt[2] = {NEG_INF, NEG_INF};
#pragma unroll
        for (int j = 0; j < BKEYS / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                int key = k0 + j * 8 + 2 * t + (e & 1), h = e >> 1;
                bool off = key >= S || (causal && key > rows[h]);
                s[j][e] = off ? NEG_INF : s[j][e] * scale;
                mt[h] = fmaxf(mt[h], s[j][e]);
            }
        float alpha[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 1));
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 2));
            float mn = fmaxf(m[h], mt[h]);
            // a row with nothing unmasked yet keeps max -inf: subtract 0 instead (no inf - inf)
            alpha[h] = mn == NEG_INF ? 1.0f : exp2f(m[h] - mn);
            m[h] = mn;
        }
        float ls[2] = {0.0f, 0.0f};
        unsigned pa[BKEYS / 16][4];  // P as A fragments: n8 tiles 2kk and 2kk + 1 make k-step kk
#pragma unroll
        for (int j = 0; j < BKEYS / 8; j++) {
            float p[4];
#pragma unroll
            for (int e = 0; e < 4; e++) {
                float mh = m[e >> 1] == NEG_INF ? 0.0f : m[e >> 1];
                p[e] = exp2f(s[j][e] - mh);
                ls[e >> 1] += p[e];
            }
            pa[j / 2][(j % 2) * 2] = pack_bf16(p[0], p[1]);
            pa[j / 2][(j % 2) * 2 + 1] = pack_bf16(p[2], p[3]);
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
            ls[h] += __shfl_xor_sync(0xffffffffu, ls[h], 1);
            ls[h] += __shfl_xor_sync(0xffffffffu, ls[h], 2);
            l[h] = l[h] * alpha[h] + ls[h];
        }
#pragma unroll
        for (int j = 0; j < D / 8; j++) {  // rescale the accumulator, then add this tile's P·V
            o[j][0] *= alpha[0]; o[j][1] *= alpha[0]; o[j][2] *= alpha[1]; o[j][3] *= alpha[1];
#pragma unroll
            for (int kk = 0; kk < BKEYS / 16; kk++) {
                // B[k = key][n = d]: two keys a register, so two 16-bit loads packed.
                const unsigned short* p = sV + (kk * 16 + 2 * t) * ROW + j * 8 + g;
                unsigned b0 = p[0] | ((unsigned)p[ROW] << 16);
                unsigned b1 = p[8 * ROW] | ((unsigned)p[9 * ROW] << 16);
                mma_bf16(o[j], pa[kk], b0, b1);
            }
        }
        __syncthreads();  // every warp is done with the tiles before the next fill overwrites them
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (rows[h] >= S) continue;
        float inv = 1.0f / l[h];
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            __nv_bfloat162 v = __floats2bfloat162_rn(o[j][2 * h] * inv, o[j][2 * h + 1] * inv);
            *reinterpret_cast<__nv_bfloat162*>(O + base + (size_t)rows[h] * D + j * 8 + 2 * t) = v;
        }
    }
}

// One kernel per head dimension: each has its own static shared tiles (2 × 64 × (D + 8) halves).
extern "C" __global__ void __launch_bounds__(128) flash_prefill_d64(
    const unsigned short* __restrict__ Q, const unsigned short* __restrict__ K, const unsigned short* __restrict__ V,
    unsigned short* __restrict__ O, int S, int D, int causal)
{
    flash_block<64>(Q, K, V, O, S, causal);
}

extern "C" __global__ void __launch_bounds__(128) flash_prefill_d128(
    const unsigned short* __restrict__ Q, const unsigned short* __restrict__ K, const unsigned short* __restrict__ V,
    unsigned short* __restrict__ O, int S, int D, int causal)
{
    flash_block<128>(Q, K, V, O, S, causal);
}
