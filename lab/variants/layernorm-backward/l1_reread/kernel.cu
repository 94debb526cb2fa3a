// Variant l1_reread: the layernorm-backward solution before the cp.async ring (kept to time against it).
// LayerNorm backward from the forward's saved mean and rstd, with xhat = (x - mean) * rstd:
//   dx[r][c] = rstd[r] * (gamma[c] dy[r][c] - a[r] - xhat[r][c] * b[r]),
//     a[r] = mean_c(gamma dy),  b[r] = mean_c(gamma dy xhat)        (two row reductions)
//   dgamma[c] = sum_r dy xhat,  dbeta[c] = sum_r dy                   (two column reductions)
//
// The column sums run across every row, which is what makes this kernel interesting. Atomics
// into dgamma from every row (R * C of them, 16384 deep per column) serialise in L2 and give a
// different rounding every run. Instead, two launches, deterministic:
//  * lnb_rows: a persistent grid of G blocks, block g taking rows g, g + G, ...; each thread owns
//    the same columns in every row, so it keeps gamma and its dgamma / dbeta partial sums in
//    registers across rows and writes one partial row per block to a G × C workspace at the end.
//    Both row sums go through one fused block reduction (one pair of barriers per row, not two).
//  * lnb_columns: dgamma[c] and dbeta[c] add up the G partials in a fixed order.
// The workspace traffic is 16 C bytes per block against 12 C per row: the plan gives each block
// at least 16 rows so it stays under a tenth of the compulsory bytes.
#define FULL 0xffffffffu

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL, v, off);
    return v;
}

// Block-wide sums of two values at once (blockDim.x a multiple of 32); every thread gets both.
__device__ void block_sum2(float& a, float& b, float2* red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    a = warp_sum(a);
    b = warp_sum(b);
    if (lane == 0) red[warp] = make_float2(a, b);
    __syncthreads();  // publish the per-warp partials
    const float2 w = lane < warps ? red[lane] : make_float2(0.0f, 0.0f);
    a = warp_sum(w.x);
    b = warp_sum(w.y);
    __syncthreads();  // everyone has read red[] before the next row's reduction overwrites it
}

// P columns per thread: c = threadIdx.x + k * blockDim.x (coalesced), C <= P * blockDim.x.
// Registers hold what lives across rows (the dgamma / dbeta partials, and gamma when KEEP_GAMMA);
// the row itself is read from HBM once for the sums and again from L1 (where it still is) for dx,
// which keeps two 512-thread blocks per SM resident: one block's barriers hide behind the
// other's loads.
template <int P, bool KEEP_GAMMA>
__device__ void lnb_rows(const float* __restrict__ dy, const float* __restrict__ x,
                         const float* __restrict__ mean, const float* __restrict__ rstd,
                         const float* __restrict__ gamma, float* __restrict__ dx,
                         float* __restrict__ ws_gamma, float* __restrict__ ws_beta, int R, int C)
{
    __shared__ float2 red[32];
    float g[KEEP_GAMMA ? P : 1], acc_g[P], acc_b[P];
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int c = threadIdx.x + k * blockDim.x;
        if (KEEP_GAMMA) g[KEEP_GAMMA ? k : 0] = c < C ? gamma[c] : 0.0f;
        acc_g[k] = 0.0f;
        acc_b[k] = 0.0f;
    }
    const float inv_c = 1.0f / (float)C;
    for (int r = blockIdx.x; r < R; r += gridDim.x) {
        const float* dyr = dy + (size_t)r * C;
        const float* xr = x + (size_t)r * C;
        const float mu = mean[r], rs = rstd[r];
        float a = 0.0f, b = 0.0f;
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const int c = threadIdx.x + k * blockDim.x;
            if (c < C) {
                const float d = dyr[c], xh = (xr[c] - mu) * rs;
                const float gd = (KEEP_GAMMA ? g[KEEP_GAMMA ? k : 0] : gamma[c]) * d;
                a += gd;
                b += gd * xh;
                acc_g[k] += d * xh;
                acc_b[k] += d;
            }
        }
        block_sum2(a, b, red);
        a *= inv_c;
        b *= inv_c;
        float* dxr = dx + (size_t)r * C;
#pragma unroll
        for (int k = 0; k < P; ++k) {
            const int c = threadIdx.x + k * blockDim.x;
            if (c < C) {
                const float d = dyr[c], xh = (xr[c] - mu) * rs;  // L1 hits: read moments ago
                dxr[c] = rs * ((KEEP_GAMMA ? g[KEEP_GAMMA ? k : 0] : gamma[c]) * d - a - xh * b);
            }
        }
    }
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int c = threadIdx.x + k * blockDim.x;
        if (c < C) {
            ws_gamma[(size_t)blockIdx.x * C + c] = acc_g[k];
            ws_beta[(size_t)blockIdx.x * C + c] = acc_b[k];
        }
    }
}

// C <= 4096: up to 512 threads x 8 columns, two blocks per SM within the register file.
extern "C" __global__ void __launch_bounds__(512, 2) lnb_rows8(
    const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean,
    const float* __restrict__ rstd, const float* __restrict__ gamma, float* __restrict__ dx,
    float* __restrict__ ws_gamma, float* __restrict__ ws_beta, int R, int C)
{
    lnb_rows<8, true>(dy, x, mean, rstd, gamma, dx, ws_gamma, ws_beta, R, C);
}

// C <= 16384: 1024 threads x 16 columns; gamma is read with the row (64 registers per thread).
extern "C" __global__ void __launch_bounds__(1024) lnb_rows16(
    const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean,
    const float* __restrict__ rstd, const float* __restrict__ gamma, float* __restrict__ dx,
    float* __restrict__ ws_gamma, float* __restrict__ ws_beta, int R, int C)
{
    lnb_rows<16, false>(dy, x, mean, rstd, gamma, dx, ws_gamma, ws_beta, R, C);
}

// dgamma[c], dbeta[c] = sums over the G partial rows. Block (32, 8): 32 adjacent columns
// (coalesced rows of the workspace), 8 slices of the partials summed in a fixed order, then
// combined through shared memory: the same bits every run.
extern "C" __global__ void __launch_bounds__(256) lnb_columns(const float* __restrict__ ws_gamma,
                                                              const float* __restrict__ ws_beta, int G, int C,
                                                              float* __restrict__ dgamma, float* __restrict__ dbeta)
{
    __shared__ float sg[8][33], sb[8][33];  // 33: the column read below hits 8 different banks
    const int c = blockIdx.x * 32 + threadIdx.x;
    float ag = 0.0f, ab = 0.0f;
    if (c < C) {
        for (int i = threadIdx.y; i < G; i += 8) {
            ag += ws_gamma[(size_t)i * C + c];
            ab += ws_beta[(size_t)i * C + c];
        }
    }
    sg[threadIdx.y][threadIdx.x] = ag;
    sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && c < C) {
        float tg = 0.0f, tb = 0.0f;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            tg += sg[j][threadIdx.x];
            tb += sb[j][threadIdx.x];
        }
        dgamma[c] = tg;
        dbeta[c] = tb;
    }
}
