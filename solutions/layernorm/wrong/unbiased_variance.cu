// kata-expect: wrong-answer
// The variance is divided by C - 1 (the sample variance, torch.var's default) where layer_norm divides by C.
// LayerNorm forward over the rows of an R×C float32 matrix, one block per row:
//   mean = sum(x) / C,  var = sum((x - mean)^2) / C,  rstd = 1 / sqrt(var + eps),
//   y = (x - mean) * rstd * gamma + beta; mean[r] and rstd[r] are saved for the backward.
//
// Two ideas carry it:
//  * Variance from the deviations, never E[x^2] - E[x]^2: for a row with mean 2000 and standard
//    deviation 0.5, float32 rounds E[x^2] = 4e6 to steps of 0.25-0.5, as large as the variance
//    itself, and the difference is noise (or negative). Two passes over values held in registers
//    cost no extra memory traffic; rows too long for registers use Welford's running mean.
//  * Bandwidth is the score (8 bytes per element): x is read once and y written once. Rows up to
//    16384 floats live in registers (float4 loads when C % 4 == 0, so every row starts 16-byte
//    aligned); longer rows take one Welford pass and a second read that the 60 MB L2 serves.
#define FULL 0xffffffffu

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(FULL, v, off);
    return v;
}

// Block-wide sum (blockDim.x a multiple of 32); every thread gets the result.
__device__ float block_sum(float v, float* red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) red[warp] = v;
    __syncthreads();  // publish the per-warp partials
    v = lane < warps ? red[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();  // everyone has read red[] before the next block_sum overwrites it
    return v;
}

// P scalars per thread, element tid + k * blockDim.x (coalesced), any C <= P * blockDim.x.
template <int P>
__device__ void layernorm_regs(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y,
                               float* __restrict__ mean, float* __restrict__ rstd, int C, float eps)
{
    __shared__ float red[32];
    const float* row = x + (size_t)blockIdx.x * C;
    float* out = y + (size_t)blockIdx.x * C;

    float v[P];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        v[k] = i < C ? row[i] : 0.0f;
        s += v[k];
    }
    const float mu = block_sum(s, red) / (float)C;

    // Second pass, from registers: the squared deviations carry the variance's digits.
    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const float d = threadIdx.x + k * blockDim.x < C ? v[k] - mu : 0.0f;  // padding adds nothing
        q += d * d;
    }
    const float r = rsqrtf(block_sum(q, red) / (float)(C - 1) + eps);

#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int i = threadIdx.x + k * blockDim.x;
        if (i < C) out[i] = (v[k] - mu) * r * gamma[i] + beta[i];
    }
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}

extern "C" __global__ void __launch_bounds__(1024) layernorm_regs8(
    const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
    float* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd, int C, float eps)
{
    layernorm_regs<8>(x, gamma, beta, y, mean, rstd, C, eps);
}

// C % 4 == 0: P float4 per thread, float4 j = tid + k * blockDim.x; a quarter of the load and
// store instructions of the scalar path, for rows up to 16 * blockDim.x floats.
template <int P>
__device__ void layernorm_vec4(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y,
                               float* __restrict__ mean, float* __restrict__ rstd, int C, float eps)
{
    __shared__ float red[32];
    const int C4 = C >> 2;
    const float4* row = reinterpret_cast<const float4*>(x + (size_t)blockIdx.x * C);
    float4* out = reinterpret_cast<float4*>(y + (size_t)blockIdx.x * C);
    const float4* g4 = reinterpret_cast<const float4*>(gamma);
    const float4* b4 = reinterpret_cast<const float4*>(beta);

    float4 v[P];
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int j = threadIdx.x + k * blockDim.x;
        v[k] = j < C4 ? row[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        s += (v[k].x + v[k].y) + (v[k].z + v[k].w);
    }
    const float mu = block_sum(s, red) / (float)C;

    float q = 0.0f;
#pragma unroll
    for (int k = 0; k < P; ++k) {
        if (threadIdx.x + k * blockDim.x < C4) {
            const float a = v[k].x - mu, b = v[k].y - mu, c = v[k].z - mu, d = v[k].w - mu;
            q += (a * a + b * b) + (c * c + d * d);
        }
    }
    const float r = rsqrtf(block_sum(q, red) / (float)C + eps);

#pragma unroll
    for (int k = 0; k < P; ++k) {
        const int j = threadIdx.x + k * blockDim.x;
        if (j < C4) {
            const float4 g = g4[j], b = b4[j];
            out[j] = make_float4((v[k].x - mu) * r * g.x + b.x, (v[k].y - mu) * r * g.y + b.y,
                                 (v[k].z - mu) * r * g.z + b.z, (v[k].w - mu) * r * g.w + b.w);
        }
    }
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}

extern "C" __global__ void __launch_bounds__(1024) layernorm_vec4x4(
    const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
    float* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd, int C, float eps)
{
    layernorm_vec4<4>(x, gamma, beta, y, mean, rstd, C, eps);
}

// Chan et al.'s merge of two Welford states (count n, mean mu, sum of squared deviations m2).
__device__ __forceinline__ void welford_merge(float& n, float& mu, float& m2, float nb, float mub, float m2b)
{
    const float nn = n + nb;
    if (nn == 0.0f) return;
    const float d = mub - mu, wb = nb / nn;
    mu += d * wb;
    m2 += m2b + d * d * n * wb;
    n = nn;
}

__device__ __forceinline__ void warp_welford(float& n, float& mu, float& m2)
{
    for (int off = 16; off > 0; off >>= 1) {
        const float nb = __shfl_xor_sync(FULL, n, off), mub = __shfl_xor_sync(FULL, mu, off),
                    m2b = __shfl_xor_sync(FULL, m2, off);
        welford_merge(n, mu, m2, nb, mub, m2b);
    }
}

// Rows too long for registers: one Welford pass (each update moves the running mean by
// (x - mean) / n, so no large sum is ever formed), then a second read to write y.
extern "C" __global__ void __launch_bounds__(1024) layernorm_welford(
    const float* __restrict__ x, const float* __restrict__ gamma, const float* __restrict__ beta,
    float* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd, int C, float eps)
{
    __shared__ float sn[32], smu[32], sm2[32];
    const float* row = x + (size_t)blockIdx.x * C;
    float* out = y + (size_t)blockIdx.x * C;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;

    float n = 0.0f, mu = 0.0f, m2 = 0.0f;
    for (int i = threadIdx.x; i < C; i += blockDim.x) {
        const float xi = row[i];
        n += 1.0f;
        const float d = xi - mu;
        mu += d / n;
        m2 += d * (xi - mu);
    }
    warp_welford(n, mu, m2);
    if (lane == 0) {
        sn[warp] = n;
        smu[warp] = mu;
        sm2[warp] = m2;
    }
    __syncthreads();
    n = lane < warps ? sn[lane] : 0.0f;
    mu = lane < warps ? smu[lane] : 0.0f;
    m2 = lane < warps ? sm2[lane] : 0.0f;
    warp_welford(n, mu, m2);
    // The merge is not symmetric in its rounding, so lanes may differ in the last bit: use lane 0's.
    mu = __shfl_sync(FULL, mu, 0);
    m2 = __shfl_sync(FULL, m2, 0);

    const float r = rsqrtf(m2 / (float)C + eps);
    for (int i = threadIdx.x; i < C; i += blockDim.x) out[i] = (row[i] - mu) * r * gamma[i] + beta[i];
    if (threadIdx.x == 0) {
        mean[blockIdx.x] = mu;
        rstd[blockIdx.x] = r;
    }
}
