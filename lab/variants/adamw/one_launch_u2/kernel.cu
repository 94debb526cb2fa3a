// Variant "one_launch" of the adamw solution (same arithmetic, bit for bit): one launch, no chunk
// table in global memory, more bytes in flight.
//  * Every block of the persistent grid builds the chunk table itself, in shared memory: thread t
//    sums ceil(sizes[i] / CHUNK) over its own run of tensors (all its loads in flight at once),
//    then one block scan. T = 1200 costs each block ~2 us once, at the start; the solution's
//    separate table launch cost a launch plus the host's time to issue the second one (the bench
//    flagged 327 us of issue, longer than the L2 flush: the GPU waited on Python).
//  * Per chunk: a binary search in shared memory, starting from the previous chunk's tensor (a
//    block's chunks only move forward), then U float4 of each of p, g, m, v per thread loaded
//    before any is used (U = 4: 256 B in flight per thread, a whole 4096-element chunk per block
//    in one step) and a scalar tail that stops at the tensor's end.
//  * The grid is sized to what is resident (__launch_bounds__ caps the registers), so no block
//    waits for a second wave with its share of chunks.
#define CHUNK 4096  // elements per chunk

__device__ __forceinline__ void adamw_one(float& p, float g, float& m, float& v, float decay, float b1,
                                          float b2, float step, float inv_sqrt_bc2, float eps)
{
    m = b1 * m + (1.0f - b1) * g;
    v = b2 * v + (1.0f - b2) * g * g;
    // Decoupled weight decay: shrink the weights, leave the gradient and the moments alone.
    p = p * decay - step * m / (sqrtf(v) * inv_sqrt_bc2 + eps);
}


// Exclusive prefix of ceil(sizes[i] / CHUNK) into start[0..T] (shared), by the whole block.
__device__ void chunk_table(const long long* __restrict__ sizes, int T, int* start)
{
    __shared__ int warp_sum[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int per = (T + blockDim.x - 1) / blockDim.x, lo = min(T, threadIdx.x * per), hi = min(T, lo + per);
    int own = 0;
    for (int i = lo; i < hi; ++i) own += (int)((sizes[i] + CHUNK - 1) / CHUNK);
    int incl = own;
    for (int off = 1; off < 32; off <<= 1) {
        const int up = __shfl_up_sync(0xffffffffu, incl, off);
        if (lane >= off) incl += up;
    }
    if (lane == 31) warp_sum[warp] = incl;
    __syncthreads();  // the warp totals are visible
    int before = incl - own;
    for (int w = 0; w < warp; ++w) before += warp_sum[w];
    for (int i = lo; i < hi; ++i) {
        start[i] = before;
        before += (int)((sizes[i] + CHUNK - 1) / CHUNK);
    }
    if (threadIdx.x == blockDim.x - 1) start[T] = before;  // hi == T for the last thread
    __syncthreads();  // the table is complete
}

template <int U>
__device__ void adamw_fused(float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                            float* __restrict__ v, const long long* __restrict__ offsets,
                            const long long* __restrict__ sizes, const float* __restrict__ wd, int T, float lr,
                            float b1, float b2, float eps, float bc1, float bc2)
{
    extern __shared__ int start[];  // T + 1
    chunk_table(sizes, T, start);
    const int total = start[T];
    const float step = lr / bc1, inv_sqrt_bc2 = rsqrtf(bc2);
    int lo = 0;
    for (int c = blockIdx.x; c < total; c += gridDim.x) {
        int hi = T - 1;  // the last tensor whose first chunk is <= c (empty tensors are skipped)
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (start[mid] <= c) lo = mid;
            else hi = mid - 1;
        }
        const long long begin = (long long)(c - start[lo]) * CHUNK;
        const int n = (int)min((long long)CHUNK, sizes[lo] - begin);  // never past the tensor's end
        const long long at = offsets[lo] + begin;                      // a multiple of 4
        const float decay = 1.0f - lr * wd[lo];
        float4* p4 = reinterpret_cast<float4*>(p + at);
        const float4* g4 = reinterpret_cast<const float4*>(g + at);
        float4* m4 = reinterpret_cast<float4*>(m + at);
        float4* v4 = reinterpret_cast<float4*>(v + at);
        const int n4 = n >> 2;
        for (int base = 0; base < n4; base += U * blockDim.x) {
            float4 pp[U], gg[U], mm[U], vv[U];
#pragma unroll
            for (int k = 0; k < U; ++k) {  // every load of this step issued before any is used
                const int j = base + threadIdx.x + k * blockDim.x;
                if (j < n4) {
                    pp[k] = p4[j];
                    gg[k] = g4[j];
                    mm[k] = m4[j];
                    vv[k] = v4[j];
                }
            }
#pragma unroll
            for (int k = 0; k < U; ++k) {
                const int j = base + threadIdx.x + k * blockDim.x;
                if (j < n4) {
                    adamw_one(pp[k].x, gg[k].x, mm[k].x, vv[k].x, decay, b1, b2, step, inv_sqrt_bc2, eps);
                    adamw_one(pp[k].y, gg[k].y, mm[k].y, vv[k].y, decay, b1, b2, step, inv_sqrt_bc2, eps);
                    adamw_one(pp[k].z, gg[k].z, mm[k].z, vv[k].z, decay, b1, b2, step, inv_sqrt_bc2, eps);
                    adamw_one(pp[k].w, gg[k].w, mm[k].w, vv[k].w, decay, b1, b2, step, inv_sqrt_bc2, eps);
                    p4[j] = pp[k];
                    m4[j] = mm[k];
                    v4[j] = vv[k];
                }
            }
        }
        const int i = (n & ~3) + threadIdx.x;  // the last n % 4 elements, one thread each
        if (i < n) adamw_one(p[at + i], g[at + i], m[at + i], v[at + i], decay, b1, b2, step, inv_sqrt_bc2, eps);
    }
}

// 256 threads, U = 4: 16 float4 live per thread; three blocks per SM within the register file.
extern "C" __global__ void __launch_bounds__(256, 3) adamw_fused4(
    float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
    const long long* __restrict__ offsets, const long long* __restrict__ sizes, const float* __restrict__ wd,
    int T, float lr, float b1, float b2, float eps, float bc1, float bc2)
{
    adamw_fused<4>(p, g, m, v, offsets, sizes, wd, T, lr, b1, b2, eps, bc1, bc2);
}

// 256 threads, U = 2: 8 float4 live per thread; four blocks per SM (five spill).
extern "C" __global__ void __launch_bounds__(256, 4) adamw_fused2(
    float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
    const long long* __restrict__ offsets, const long long* __restrict__ sizes, const float* __restrict__ wd,
    int T, float lr, float b1, float b2, float eps, float bc1, float bc2)
{
    adamw_fused<2>(p, g, m, v, offsets, sizes, wd, T, lr, b1, b2, eps, bc1, bc2);
}
