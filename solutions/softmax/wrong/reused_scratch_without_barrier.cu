// kata-expect: race-war
// The max and the sum share red[] with no barrier between the last read of the max partials and the first write of the sum partials.
// Row softmax, y[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r), one block per row.
//
// The trick is how often the row crosses HBM. A three-pass kernel (max, sum, write) reads it three
// times (ceiling 2/5 of the bandwidth roofline); here the row is read once and written once:
//  * softmax_regs<P>: each thread keeps its P elements in registers (P = 8 or 32, so a row of up
//    to 32768 floats fits in a 1024-thread block), reduces max and sum over the block, writes.
//  * softmax_online: rows too long for registers (C = 2^17) use the online recurrence, a running
//    max with a running sum rescaled whenever the max grows, so the first pass needs one read; the
//    second pass re-reads the row to write it. Rows of a few hundred KB stay in the 60 MB L2
//    between the passes, so HBM still sees about one read and one write.
// Subtracting the row max first is what keeps exp() finite for inputs of ±1e4.
#define FULL 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)  // -inf without <math.h> (NVRTC has no host headers)

__device__ __forceinline__ float warp_max(float v)
{
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL, v, off);
    return v;
}

// Block-wide max or sum (blockDim.x a multiple of 32). Every thread gets the result.
template <bool IS_MAX>
__device__ float block_reduce(float v, float* red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();  // publish the per-warp partials
    v = lane < warps ? red[lane] : (IS_MAX ? NEG_INF : 0.0f);
    v = IS_MAX ? warp_max(v) : warp_sum(v);
    return v;
}

template <int P>
__device__ void softmax_regs(const float* __restrict__ x, float* __restrict__ y, int C)
{
    __shared__ float red[32];
    const float* row = x + (size_t)blockIdx.x * C;
    float* out = y + (size_t)blockIdx.x * C;

    // Element tid + k * blockDim.x: consecutive threads touch consecutive addresses (coalesced),
    // and the fully unrolled loop keeps v[] in registers. Padding is -inf, whose exp is 0.
    float v[P];
    float m = NEG_INF;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        v[k] = i < C ? row[i] : NEG_INF;
        m = fmaxf(m, v[k]);
    }
    m = block_reduce<true>(m, red);

    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        v[k] = __expf(v[k] - m);  // <= 1: no overflow whatever the inputs' magnitude
        s += v[k];
    }
    const float inv = 1.0f / block_reduce<false>(s, red);

#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        if (i < C) out[i] = v[k] * inv;
    }
}

extern "C" __global__ void __launch_bounds__(1024) softmax_regs8(const float* __restrict__ x, float* __restrict__ y, int C)
{
    softmax_regs<8>(x, y, C);
}

extern "C" __global__ void __launch_bounds__(1024) softmax_regs32(const float* __restrict__ x, float* __restrict__ y, int C)
{
    softmax_regs<32>(x, y, C);
}

extern "C" __global__ void __launch_bounds__(1024) softmax_online(const float* __restrict__ x, float* __restrict__ y, int C)
{
    __shared__ float red[32];
    const float* row = x + (size_t)blockIdx.x * C;
    float* out = y + (size_t)blockIdx.x * C;

    // Online softmax: s is the sum of exp(x - m) for the elements seen so far; when a larger
    // element arrives the old sum is rescaled by exp(m_old - m_new). One exp per element usually.
    float m = NEG_INF, s = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        const float xi = row[i];
        if (xi > m) {
            s *= __expf(m - xi);  // m = -inf on the first element: exp(-inf) = 0, s stays 0
            m = xi;
        }
        s += __expf(xi - m);
    }
    // Combine the threads: rescale every partial sum to the row max before adding.
    const float row_max = block_reduce<true>(m, red);
    s = m == NEG_INF ? 0.0f : s * __expf(m - row_max);
    const float inv = 1.0f / block_reduce<false>(s, red);

    for (int i = threadIdx.x; i < C; i += blockDim.x) out[i] = __expf(row[i] - row_max) * inv;
}
