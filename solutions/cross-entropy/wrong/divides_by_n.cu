// kata-expect: wrong-answer
// The gradient is divided by N, the batch size, but the mean loss averages only the rows that are not ignored, so every gradient is too small by N_valid / N.
// Fused cross-entropy, forward and backward: per-row loss and dlogits = (softmax - onehot) / N_valid,
// one block per row, the softmax never written.
//
// The traffic is the score: the logits are read and dlogits written, 8NV bytes, nothing else of
// size N×V. A 128256-float row is 500 KB, too long to hold on chip, so each block reads its row twice:
//  * pass 1: the online recurrence gives the row max m and s = sum exp(x - m) in one read (when a
//    larger x arrives, s is rescaled by exp(m_old - m_new));
//  * pass 2: dlogits = exp(x - m) * (1 / (s N_valid)), minus 1 / N_valid at the target. It walks
//    the row backwards: the elements pass 1 read last are the likeliest still in L2, so the re-read
//    mostly hits L2 instead of HBM (otherwise 12NV bytes cap the kernel at 0.67 of the roofline).
//    The dlogits stores are streaming (__stcs, evict-first) so they do not push the row out of L2.
// N_valid is a batch-wide count, so a one-block kernel counts it first; ignored rows only write zeros.
// Rows start at r * V floats: for odd V (50257) a scalar head brings each row to a 16-byte boundary
// so the body is float4 loads and stores.
#define FULL 0xffffffffu
#define NEG_INF __int_as_float(0xff800000)  // -inf without <math.h> (NVRTC has no host headers)

// n_valid[0] = number of targets that are not ignore_index. One block; N is a few thousand ints.
extern "C" __global__ void __launch_bounds__(1024)
count_valid(const int* __restrict__ targets, int N, int ignore_index, int* __restrict__ n_valid)
{
    __shared__ int part[32];
    int c = 0;
    for (int i = threadIdx.x; i < N; i += blockDim.x) c += targets[i] != ignore_index;
    for (int off = 16; off > 0; off >>= 1) c += __shfl_xor_sync(FULL, c, off);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = c;
    __syncthreads();
    if (threadIdx.x < 32) {
        c = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0;
        for (int off = 16; off > 0; off >>= 1) c += __shfl_xor_sync(FULL, c, off);
        if (threadIdx.x == 0) n_valid[0] = c;
    }
}

// (m, s) += x: the online softmax statistics of one more element.
__device__ __forceinline__ void online_add(float& m, float& s, float x)
{
    if (x > m) {
        s = s * __expf(m - x) + 1.0f;  // exp(-inf) = 0 for the first element
        m = x;
    } else {
        s += __expf(x - m);
    }
}

// Merge two (m, s) pairs. Both m = -inf (threads that saw no element) must give (-inf, 0), not NaN.
__device__ __forceinline__ void online_merge(float& m, float& s, float m2, float s2)
{
    const float mm = fmaxf(m, m2);
    if (mm == NEG_INF) return;
    s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
    m = mm;
}

extern "C" __global__ void __launch_bounds__(1024)
cross_entropy(const float* __restrict__ logits, const int* __restrict__ targets, const int* __restrict__ n_valid,
              float* __restrict__ loss, float* __restrict__ dlogits, int V, int ignore_index)
{
    __shared__ float red_m[32], red_s[32];
    const int r = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const size_t start = (size_t)r * V;
    const float* const row = logits + start;
    float* const grad = dlogits + start;
    // head scalars to the first 16-byte boundary, nvec float4s, then a scalar tail of < 4
    const int head = min(V, (int)((4 - (start & 3)) & 3));
    const int nvec = (V - head) >> 2;
    const int tail0 = head + 4 * nvec;
    const float4* const row4 = reinterpret_cast<const float4*>(row + head);
    float4* const grad4 = reinterpret_cast<float4*>(grad + head);

    const int t = targets[r];
    if (t == ignore_index) {  // the whole block takes this branch: no barrier is skipped by some threads only
        const float4 z = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        for (int i = tid; i < nvec; i += nt) __stcs(grad4 + i, z);
        if (tid < head) grad[tid] = 0.0f;
        if (tail0 + tid < V) grad[tail0 + tid] = 0.0f;
        if (tid == 0) loss[r] = 0.0f;
        return;
    }

    // Pass 1: each thread's (m, s) over its elements; four float4 loads in flight per thread.
    float m = NEG_INF, s = 0.0f;
    if (tid < head) online_add(m, s, row[tid]);
    if (tail0 + tid < V) online_add(m, s, row[tail0 + tid]);
#pragma unroll 4
    for (int i = tid; i < nvec; i += nt) {
        const float4 v = __ldg(row4 + i);
        // one rescale per float4 instead of one per element
        const float vm = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
        if (vm > m) {
            s *= __expf(m - vm);
            m = vm;
        }
        s += __expf(v.x - m) + __expf(v.y - m) + __expf(v.z - m) + __expf(v.w - m);
    }

    // Block-wide merge: shuffles within a warp, then warp 0 merges the warps' pairs.
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(FULL, m, off), s2 = __shfl_xor_sync(FULL, s, off);
        online_merge(m, s, m2, s2);
    }
    if ((tid & 31) == 0) {
        red_m[tid >> 5] = m;
        red_s[tid >> 5] = s;
    }
    __syncthreads();
    if (tid < 32) {
        const bool have = tid < (nt >> 5);
        m = have ? red_m[tid] : NEG_INF;
        s = have ? red_s[tid] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) {
            const float m2 = __shfl_xor_sync(FULL, m, off), s2 = __shfl_xor_sync(FULL, s, off);
            online_merge(m, s, m2, s2);
        }
        if (tid == 0) {
            red_m[0] = m;
            red_s[0] = s;
            // (m - x_t) + log s, not lse - x_t: no rounding of an lse near 1e4 in between
            loss[r] = (m - row[t]) + logf(s);
        }
    }
    __syncthreads();
    m = red_m[0];
    const float inv_n = 1.0f / (float)gridDim.x;
    const float scale = inv_n / red_s[0];  // p_j / N_valid = exp(x_j - m) * scale

    // Pass 2, backwards (see the top): dlogits, with the one-hot subtracted where j == t.
    const int tv = t - head;  // the target's place relative to the float4 body
    if (tid < head) grad[tid] = __expf(row[tid] - m) * scale - (tid == t ? inv_n : 0.0f);
    if (tail0 + tid < V) grad[tail0 + tid] = __expf(row[tail0 + tid] - m) * scale - (tail0 + tid == t ? inv_n : 0.0f);
#pragma unroll 4
    for (int i = nvec - 1 - tid; i >= 0; i -= nt) {
        const float4 v = __ldcs(row4 + i);  // last use of the row: evict-first
        float4 g;
        g.x = __expf(v.x - m) * scale - (4 * i + 0 == tv ? inv_n : 0.0f);
        g.y = __expf(v.y - m) * scale - (4 * i + 1 == tv ? inv_n : 0.0f);
        g.z = __expf(v.z - m) * scale - (4 * i + 2 == tv ? inv_n : 0.0f);
        g.w = __expf(v.w - m) * scale - (4 * i + 3 == tv ? inv_n : 0.0f);
        __stcs(grad4 + i, g);
    }
}
