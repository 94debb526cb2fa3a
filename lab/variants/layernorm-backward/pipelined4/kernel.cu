// Variant "pipelined" of the layernorm-backward solution (same math, same two launches): the rows
// reach shared memory through a ring of cp.async stages, so the loads of the next rows are in
// flight while the block sits in its per-row barriers. In the solution every row is
// load -> wait -> barrier pair -> dx, strictly in turn, and only two blocks per SM overlap that.
//  * lnb_pipe<S>: C % 4 == 0 and C <= 4096. A persistent block of up to 512 threads owns 2 float4
//    columns per array (the same ones in every row); it keeps S - 1 rows in flight (cp.async.cg,
//    16 bytes a copy, L1 bypassed), and each thread reads back only the float4 slots it copied
//    itself, so the ring needs no barrier: its own cp.async.wait_group makes them visible. The
//    row's mean and rstd are staged in shared memory once, at the start, for every row of the
//    block (a global load per row would put a DRAM round trip back on the critical path).
//    gamma and the dgamma / dbeta partials stay in registers; the dx row is written as float4.
//  * other shapes: the solution's lnb_rows8 / lnb_rows16 (below, unchanged).
//  * lnb_columns: the G partial rows per column, in a fixed order (deterministic).
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


__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// This thread's float4 slots of row r of dy and x into one ring stage ([dy row | x row]).
template <int P4>
__device__ __forceinline__ void fetch_row(float4* stage, const float* dy, const float* x, int r, int C4)
{
    const float4* dyr = reinterpret_cast<const float4*>(dy) + (size_t)r * C4;
    const float4* xr = reinterpret_cast<const float4*>(x) + (size_t)r * C4;
#pragma unroll
    for (int k = 0; k < P4; ++k) {
        const int c = threadIdx.x + k * blockDim.x;
        if (c < C4) {
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem_addr(stage + c)), "l"(dyr + c));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(smem_addr(stage + C4 + c)), "l"(xr + c));
        }
    }
}

// One column's share of the row sums and of the dgamma / dbeta partials.
__device__ __forceinline__ void sums1(float d, float xv, float g, float2 ms, float& a, float& b, float& ag, float& ab)
{
    const float xh = (xv - ms.x) * ms.y, gd = g * d;
    a += gd;
    b += gd * xh;
    ag += d * xh;
    ab += d;
}

__device__ __forceinline__ float dx1(float d, float xv, float g, float2 ms, float a, float b)
{
    return ms.y * (g * d - a - (xv - ms.x) * ms.y * b);
}

// Dynamic shared memory: S stages of 2 C floats, then (mean, rstd) of each of the block's rows.
template <int S, int P4>
__device__ void lnb_pipe(const float* __restrict__ dy, const float* __restrict__ x,
                         const float* __restrict__ mean, const float* __restrict__ rstd,
                         const float* __restrict__ gamma, float* __restrict__ dx,
                         float* __restrict__ ws_gamma, float* __restrict__ ws_beta, int R, int C)
{
    extern __shared__ float4 ring[];
    __shared__ float2 red[32];
    const int C4 = C >> 2, G = gridDim.x;
    const int rows = (R - (int)blockIdx.x + G - 1) / G;  // rows blockIdx.x + i * G, i < rows
    float2* stats = reinterpret_cast<float2*>(ring + (size_t)S * 2 * C4);
#pragma unroll
    for (int s = 0; s < S - 1; ++s) {  // the first S - 1 rows in flight before anything else
        if (s < rows) fetch_row<P4>(ring + (size_t)s * 2 * C4, dy, x, blockIdx.x + s * G, C4);
        asm volatile("cp.async.commit_group;");
    }
    for (int i = threadIdx.x; i < rows; i += blockDim.x) {
        const int r = blockIdx.x + i * G;
        stats[i] = make_float2(mean[r], rstd[r]);
    }
    float4 g[P4], ag[P4], ab[P4];
#pragma unroll
    for (int k = 0; k < P4; ++k) {
        const int c = threadIdx.x + k * blockDim.x;
        g[k] = c < C4 ? reinterpret_cast<const float4*>(gamma)[c] : make_float4(0.f, 0.f, 0.f, 0.f);
        ag[k] = ab[k] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    __syncthreads();  // stats[] is visible
    const float inv_c = 1.0f / (float)C;
    for (int i = 0; i < rows; ++i) {
        // Row i + S - 1 into the stage row i - 1 used: this thread is done with its own slots there.
        const int ahead = i + S - 1;
        if (ahead < rows) fetch_row<P4>(ring + (size_t)(ahead % S) * 2 * C4, dy, x, blockIdx.x + ahead * G, C4);
        asm volatile("cp.async.commit_group;");  // possibly empty: the wait count stays uniform
        asm volatile("cp.async.wait_group %0;" :: "n"(S - 1));  // row i's copies have landed
        const float4* st = ring + (size_t)(i % S) * 2 * C4;
        const float2 ms = stats[i];
        float a = 0.0f, b = 0.0f;
#pragma unroll
        for (int k = 0; k < P4; ++k) {
            const int c = threadIdx.x + k * blockDim.x;
            if (c < C4) {
                const float4 d = st[c], xv = st[C4 + c];
                sums1(d.x, xv.x, g[k].x, ms, a, b, ag[k].x, ab[k].x);
                sums1(d.y, xv.y, g[k].y, ms, a, b, ag[k].y, ab[k].y);
                sums1(d.z, xv.z, g[k].z, ms, a, b, ag[k].z, ab[k].z);
                sums1(d.w, xv.w, g[k].w, ms, a, b, ag[k].w, ab[k].w);
            }
        }
        block_sum2(a, b, red);
        a *= inv_c;
        b *= inv_c;
        float4* dxr = reinterpret_cast<float4*>(dx) + (size_t)(blockIdx.x + i * G) * C4;
#pragma unroll
        for (int k = 0; k < P4; ++k) {
            const int c = threadIdx.x + k * blockDim.x;
            if (c < C4) {
                const float4 d = st[c], xv = st[C4 + c];
                dxr[c] = make_float4(dx1(d.x, xv.x, g[k].x, ms, a, b), dx1(d.y, xv.y, g[k].y, ms, a, b),
                                     dx1(d.z, xv.z, g[k].z, ms, a, b), dx1(d.w, xv.w, g[k].w, ms, a, b));
            }
        }
    }
    asm volatile("cp.async.wait_all;");  // only empty groups remain; nothing may outlive the block
#pragma unroll
    for (int k = 0; k < P4; ++k) {
        const int c = threadIdx.x + k * blockDim.x;
        if (c < C4) {
            reinterpret_cast<float4*>(ws_gamma)[(size_t)blockIdx.x * C4 + c] = ag[k];
            reinterpret_cast<float4*>(ws_beta)[(size_t)blockIdx.x * C4 + c] = ab[k];
        }
    }
}

// Three stages (two rows in flight per block, 96 KB at C = 4096), two 512-thread blocks per SM.
extern "C" __global__ void __launch_bounds__(512, 2) lnb_pipe3(
    const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean,
    const float* __restrict__ rstd, const float* __restrict__ gamma, float* __restrict__ dx,
    float* __restrict__ ws_gamma, float* __restrict__ ws_beta, int R, int C)
{
    lnb_pipe<3, 2>(dy, x, mean, rstd, gamma, dx, ws_gamma, ws_beta, R, C);
}

// Four stages (three rows in flight, 128 KB at C = 4096), one block per SM.
extern "C" __global__ void __launch_bounds__(512, 1) lnb_pipe4(
    const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ mean,
    const float* __restrict__ rstd, const float* __restrict__ gamma, float* __restrict__ dx,
    float* __restrict__ ws_gamma, float* __restrict__ ws_beta, int R, int C)
{
    lnb_pipe<4, 2>(dy, x, mean, rstd, gamma, dx, ws_gamma, ws_beta, R, C);
}

// dgamma[c], dbeta[c] = sums over the G partial rows. Block (32, 16): 32 adjacent columns
// (coalesced rows of the workspace), 16 slices of the partials summed in a fixed order (four
// loads of each in flight), then combined through shared memory: the same bits every run.
extern "C" __global__ void __launch_bounds__(512) lnb_columns(const float* __restrict__ ws_gamma,
                                                              const float* __restrict__ ws_beta, int G, int C,
                                                              float* __restrict__ dgamma, float* __restrict__ dbeta)
{
    __shared__ float sg[16][33], sb[16][33];  // 33: the column read below hits different banks
    const int c = blockIdx.x * 32 + threadIdx.x;
    float ag = 0.0f, ab = 0.0f;
    if (c < C) {
#pragma unroll 4
        for (int i = threadIdx.y; i < G; i += 16) {
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
        for (int j = 0; j < 16; ++j) {
            tg += sg[j][threadIdx.x];
            tb += sb[j][threadIdx.x];
        }
        dgamma[c] = tg;
        dbeta[c] = tb;
    }
}
