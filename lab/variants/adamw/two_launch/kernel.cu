// Variant two_launch: the adamw solution before one_launch (kept to time against it).
// One AdamW step over T tensors of mixed sizes, multi-tensor style: two launches in all.
//
// The trap is the shape of the work, not the arithmetic (a dozen FLOPs per 28 bytes). One launch
// per tensor pays ~4 us each for thousands of tiny tensors; one block per tensor leaves the whole
// GPU waiting on the one block that got the 16M-parameter embedding. Instead:
//  * adamw_chunks (one block) cuts every tensor into chunks of CHUNK elements and writes the
//    exclusive prefix of chunk counts, so chunk c belongs to the tensor i with
//    chunk_start[i] <= c < chunk_start[i + 1].
//  * adamw_step runs a persistent grid; each block takes chunks c = blockIdx.x, + gridDim.x, ...,
//    finds its tensor by binary search in chunk_start (a few KB that stays in L1), and streams the
//    chunk with float4 loads (every tensor starts 16-byte aligned) and a scalar tail, never past
//    the tensor's end: the padding between tensors is someone else's memory.
// Bias corrections 1 - beta^t are scalars: the launch plan computes them once, in double.
#define CHUNK 4096  // elements per chunk: 4 float4 per thread of a 256-thread block

// Exclusive prefix sum of ceil(sizes[i] / CHUNK) into chunk_start[0..T]; one block of 1024.
extern "C" __global__ void __launch_bounds__(1024) adamw_chunks(const long long* __restrict__ sizes, int T,
                                                                int* __restrict__ chunk_start)
{
    __shared__ int warp_total[32];
    __shared__ int carry_s;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) carry_s = 0;
    __syncthreads();
    for (int base = 0; base < T; base += blockDim.x) {
        const int i = base + threadIdx.x;
        const int own = i < T ? (int)((sizes[i] + CHUNK - 1) / CHUNK) : 0;
        int incl = own;  // inclusive scan within the warp
        for (int off = 1; off < 32; off <<= 1) {
            const int up = __shfl_up_sync(0xffffffffu, incl, off);
            if (lane >= off) incl += up;
        }
        if (lane == 31) warp_total[warp] = incl;
        __syncthreads();  // the warp totals are visible
        if (warp == 0) {
            int w = lane < (int)(blockDim.x >> 5) ? warp_total[lane] : 0;
            for (int off = 1; off < 32; off <<= 1) {
                const int up = __shfl_up_sync(0xffffffffu, w, off);
                if (lane >= off) w += up;
            }
            warp_total[lane] = w;  // inclusive prefix of the warp totals
        }
        __syncthreads();
        const int carry = carry_s;
        const int before = carry + (warp ? warp_total[warp - 1] : 0) + incl - own;
        if (i < T) chunk_start[i] = before;
        __syncthreads();  // everyone has read carry_s and warp_total before they change
        if (threadIdx.x == blockDim.x - 1) carry_s = before + own;
        __syncthreads();
    }
    if (threadIdx.x == 0) chunk_start[T] = carry_s;
}

__device__ __forceinline__ void adamw_one(float& p, float g, float& m, float& v, float decay, float b1,
                                          float b2, float step, float inv_sqrt_bc2, float eps)
{
    m = b1 * m + (1.0f - b1) * g;
    v = b2 * v + (1.0f - b2) * g * g;
    // Decoupled weight decay: shrink the weights, leave the gradient and the moments alone.
    p = p * decay - step * m / (sqrtf(v) * inv_sqrt_bc2 + eps);
}

extern "C" __global__ void __launch_bounds__(256) adamw_step(
    float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
    const long long* __restrict__ offsets, const long long* __restrict__ sizes, const float* __restrict__ wd,
    const int* __restrict__ chunk_start, int T, float lr, float b1, float b2, float eps, float bc1, float bc2)
{
    const int total = chunk_start[T];
    const float step = lr / bc1, inv_sqrt_bc2 = rsqrtf(bc2);
    for (int c = blockIdx.x; c < total; c += gridDim.x) {
        // The last tensor whose first chunk is <= c (a tensor of 0 chunks is skipped over).
        int lo = 0, hi = T - 1;
        while (lo < hi) {
            const int mid = (lo + hi + 1) >> 1;
            if (chunk_start[mid] <= c) lo = mid;
            else hi = mid - 1;
        }
        const long long begin = (long long)(c - chunk_start[lo]) * CHUNK;
        const long long size = sizes[lo];
        const int n = (int)min((long long)CHUNK, size - begin);  // never past the tensor's end
        const long long at = offsets[lo] + begin;                   // a multiple of 4: float4-aligned
        const float decay = 1.0f - lr * wd[lo];

        float4* p4 = reinterpret_cast<float4*>(p + at);
        const float4* g4 = reinterpret_cast<const float4*>(g + at);
        float4* m4 = reinterpret_cast<float4*>(m + at);
        float4* v4 = reinterpret_cast<float4*>(v + at);
        for (int j = threadIdx.x; j < (n >> 2); j += blockDim.x) {
            float4 pp = p4[j], mm = m4[j], vv = v4[j];
            const float4 gg = g4[j];
            adamw_one(pp.x, gg.x, mm.x, vv.x, decay, b1, b2, step, inv_sqrt_bc2, eps);
            adamw_one(pp.y, gg.y, mm.y, vv.y, decay, b1, b2, step, inv_sqrt_bc2, eps);
            adamw_one(pp.z, gg.z, mm.z, vv.z, decay, b1, b2, step, inv_sqrt_bc2, eps);
            adamw_one(pp.w, gg.w, mm.w, vv.w, decay, b1, b2, step, inv_sqrt_bc2, eps);
            p4[j] = pp;
            m4[j] = mm;
            v4[j] = vv;
        }
        const int i = (n & ~3) + threadIdx.x;  // the last n % 4 elements, one thread each
        if (i < n) adamw_one(p[at + i], g[at + i], m[at + i], v[at + i], decay, b1, b2, step, inv_sqrt_bc2, eps);
    }
}
