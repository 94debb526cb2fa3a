// kata-expect: wrong-answer
// The float4 kernel divides the sum of squares by n4 = C / 4, the number of float4s, not by the C elements of the row.
// Fused residual RMSNorm: h = x + r, y = h * rsqrt(mean(h^2) + eps) * gamma, one read of x and r,
// one write of h and y (16 bytes per element, the roofline).
//
// The fusion is the point: torch runs add, pow, mean, rsqrt and two muls as separate kernels, each
// a trip through HBM. Here a row is read once; h is written at once and kept in registers until
// the row's scale is known, then y is written from the registers.
//  * rmsnorm_vec (C % 4 == 0, C <= 32768): float4 loads and stores, each thread holding up to VEC
//    float4s of h in a fully unrolled array (registers, not local memory: every index is a
//    compile-time constant after unrolling). blockDim.x threads per row, blockDim.y rows per
//    block, so short rows still fill a block.
//  * rmsnorm_any (any C): scalar loads (rows of odd length are not 16-byte aligned), and for the
//    second pass each thread reads back the h it wrote itself (from L1/L2; no barrier needed).
#define FULL 0xffffffffu
#define VEC 8  // float4s of h per thread in rmsnorm_vec: 128 threads cover a 4096-wide row

__device__ __forceinline__ float inv_rms(float sum_sq, int C, float eps)
{
    return rsqrtf(sum_sq / (float)C + eps);  // the mean over the row's C columns, eps inside
}

// Sum of v over the blockDim.x threads of this thread's row (threadIdx.y), returned to all of them.
// blockDim.x is a multiple of 32, so a warp never spans two rows.
__device__ __forceinline__ float row_sum(float v, float (*red)[32])
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL, v, off);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    if (lane == 0) red[threadIdx.y][warp] = v;
    __syncthreads();  // publish the per-warp partials of every row in the block
    float s = 0.0f;
    for (int w = 0; w < warps; ++w) s += red[threadIdx.y][w];  // a broadcast read: no conflicts
    return s;
}

extern "C" __global__ void rmsnorm_vec(const float* __restrict__ x, const float* __restrict__ r,
                                       const float* __restrict__ gamma, float* __restrict__ h,
                                       float* __restrict__ y, int R, int C, float eps)
{
    __shared__ float red[32][32];
    const int row = blockIdx.x * blockDim.y + threadIdx.y;
    // Threads of a row past R still take part in the barrier inside row_sum: no early return.
    const bool live = row < R;
    const int n4 = C >> 2;
    const size_t base = (size_t)row * n4;
    const float4* x4 = reinterpret_cast<const float4*>(x) + base;
    const float4* r4 = reinterpret_cast<const float4*>(r) + base;
    float4* h4 = reinterpret_cast<float4*>(h) + base;

    float4 hv[VEC];
    float sum_sq = 0.0f;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        const int i = threadIdx.x + k * blockDim.x;  // lanes on neighbouring float4s: coalesced
        if (live && i < n4) {
            const float4 a = x4[i], b = r4[i];
            hv[k] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
            h4[i] = hv[k];
            sum_sq += (hv[k].x * hv[k].x + hv[k].y * hv[k].y) + (hv[k].z * hv[k].z + hv[k].w * hv[k].w);
        }
    }
    const float s = inv_rms(row_sum(sum_sq, red), n4, eps);

    const float4* g4 = reinterpret_cast<const float4*>(gamma);  // 4C bytes shared by all rows: cached
    float4* y4 = reinterpret_cast<float4*>(y) + base;
#pragma unroll
    for (int k = 0; k < VEC; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        if (live && i < n4) {
            const float4 g = g4[i];
            y4[i] = make_float4(hv[k].x * s * g.x, hv[k].y * s * g.y, hv[k].z * s * g.z, hv[k].w * s * g.w);
        }
    }
}

extern "C" __global__ void rmsnorm_any(const float* __restrict__ x, const float* __restrict__ r,
                                       const float* __restrict__ gamma, float* __restrict__ h,
                                       float* __restrict__ y, int R, int C, float eps)
{
    __shared__ float red[32][32];
    const int row = blockIdx.x * blockDim.y + threadIdx.y;
    const bool live = row < R;
    const size_t base = (size_t)row * C;

    float sum_sq = 0.0f;
    if (live) {
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            const float v = x[base + i] + r[base + i];
            h[base + i] = v;
            sum_sq += v * v;
        }
    }
    const float s = inv_rms(row_sum(sum_sq, red), C, eps);
    if (live) {
        // Each thread reads back only the h elements it wrote, so program order makes them visible.
        for (int i = threadIdx.x; i < C; i += blockDim.x) {
            y[base + i] = h[base + i] * s * gamma[i];
        }
    }
}
