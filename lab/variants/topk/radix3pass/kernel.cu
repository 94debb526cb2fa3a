// Row-wise top-k by radix select: find the k-th largest key with three histogram passes, collect
// the k winners, sort only those.
//
// Why: sorting a whole row (what a naive top-k does) costs O(L log^2 L) work; the k-th largest
// value can be found with three passes of an 11/11/10-bit radix histogram over the row's keys,
// each pass keeping only the elements that match the digits chosen so far. Then every element
// above the threshold and just enough elements equal to it (ties!) are gathered into shared
// memory, and only those P = next_pow2(k) entries are bitonic-sorted.
//
// Floats are compared as unsigned keys: flip all bits of negatives, set the sign bit of
// positives. That orders -inf < negatives < -0 < +0 < positives < +inf, and key 0 (a NaN
// pattern no input has) is a sentinel below everything.
//
// The same kernel merges: a block handles one chunk of a row, and when a row has several chunks
// the launch plan runs it again on the chunks' candidates (with their original indices) until
// one chunk remains. Rows of a few thousand elements finish in one launch.
#define THREADS 256
#define RADIX_BITS 11
#define BINS (1 << RADIX_BITS)
#define SENTINEL_KEY 0u

__device__ __forceinline__ unsigned key_of(float f)
{
    const unsigned u = __float_as_uint(f);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float value_of(unsigned key)
{
    return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

// One warp finds the digit holding the rem-th largest key from the histogram: each lane sums a
// slice of bins (lane 0 the top slice), a warp scan finds the slice, that lane walks its bins.
__device__ __forceinline__ void find_digit(const unsigned* hist, int bins, int* s_digit, int* s_rem)
{
    const int lane = threadIdx.x;
    const int per = bins / 32;
    const int hi = bins - per * lane;
    const int rem = *s_rem;
    int sum = 0;
    for (int b = hi - per; b < hi; ++b) sum += (int)hist[b];
    int incl = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int t = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += t;
    }
    const int excl = incl - sum;
    // Every lane has read *s_rem; a shuffle does not order shared memory, __syncwarp does.
    __syncwarp();
    if (excl < rem && rem <= incl) {
        int acc = excl, b = hi - 1;
        while (acc + (int)hist[b] < rem) acc += (int)hist[b--];
        *s_digit = b;
        *s_rem = rem - acc;  // how many keys equal to the threshold still belong to the top k
    }
}

// Block (c, r): chunk c of row r, elements [c * chunk, min((c + 1) * chunk, L)) of in_vals's row r
// (row_stride apart). Writes that chunk's top min(k, chunk length) sorted descending to
// out_vals/out_idx at r * out_stride + c * k, padded with sentinels up to k.
extern "C" __global__ void __launch_bounds__(THREADS)
topk_chunk(const float* __restrict__ in_vals, const int* __restrict__ in_idx, int has_idx,
           int L, long long row_stride, int chunk, int k, int P,
           float* __restrict__ out_vals, int* __restrict__ out_idx, long long out_stride)
{
    extern __shared__ unsigned smem[];
    unsigned* hist = smem;                        // BINS
    unsigned* keys = smem + BINS;                 // P
    int* idx = reinterpret_cast<int*>(keys + P);  // P
    __shared__ int s_digit, s_rem, s_gt, s_eq;

    const int c = blockIdx.x, r = blockIdx.y;
    const int first = c * chunk;
    const int n = min(chunk, L - first);
    const int kk = min(k, n);
    const float* src = in_vals + r * row_stride + first;

    if (threadIdx.x == 0) {
        s_rem = kk;
        s_gt = 0;
        s_eq = 0;
    }

    // Radix select, most significant digits first: 11 + 11 + 10 bits.
    unsigned prefix = 0u, mask = 0u;
    for (int shift = 32 - RADIX_BITS; shift > -RADIX_BITS; shift -= RADIX_BITS) {
        const int s = max(shift, 0);
        const int width = shift >= 0 ? RADIX_BITS : RADIX_BITS + shift;
        const int bins = 1 << width;
        for (int b = threadIdx.x; b < bins; b += THREADS) hist[b] = 0u;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += THREADS) {
            const unsigned key = key_of(__ldg(src + i));
            if ((key & mask) == prefix) atomicAdd(hist + ((key >> s) & (bins - 1)), 1u);
        }
        __syncthreads();
        if (threadIdx.x < 32) find_digit(hist, bins, &s_digit, &s_rem);
        __syncthreads();
        prefix |= (unsigned)s_digit << s;
        mask |= (unsigned)(bins - 1) << s;
    }
    // prefix is now the k-th largest key; s_rem of the keys equal to it belong to the top k.
    const unsigned threshold = prefix;
    const int ties = s_rem;
    const int above = kk - ties;

    // Gather: every key above the threshold, then the first `ties` keys equal to it (any of them
    // is a valid answer, but not more of them than fit).
    for (int i = threadIdx.x; i < n; i += THREADS) {
        const unsigned key = key_of(__ldg(src + i));
        int slot = -1;
        if (key > threshold) {
            slot = atomicAdd(&s_gt, 1);
        } else if (key == threshold) {
            const int e = atomicAdd(&s_eq, 1);
            if (e < ties) slot = above + e;
        }
        if (slot >= 0) {
            keys[slot] = key;
            idx[slot] = has_idx ? __ldg(in_idx + r * row_stride + first + i) : first + i;
        }
    }
    for (int j = kk + threadIdx.x; j < P; j += THREADS) {
        keys[j] = SENTINEL_KEY;
        idx[j] = -1;
    }
    __syncthreads();

    // Bitonic sort of the P candidates, descending. Each step compares pairs (i, i + stride).
    for (int size = 2; size <= P; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int t = threadIdx.x; t < P / 2; t += THREADS) {
                const int i = 2 * t - (t & (stride - 1));
                const int j = i + stride;
                const unsigned a = keys[i], b = keys[j];
                const bool descending = (i & size) == 0;
                if ((a < b) == descending && a != b) {
                    keys[i] = b;
                    keys[j] = a;
                    const int ti = idx[i];
                    idx[i] = idx[j];
                    idx[j] = ti;
                }
            }
            __syncthreads();
        }
    }

    float* ov = out_vals + r * out_stride + (long long)c * k;
    int* oi = out_idx + r * out_stride + (long long)c * k;
    for (int j = threadIdx.x; j < k; j += THREADS) {
        ov[j] = value_of(j < kk ? keys[j] : SENTINEL_KEY);
        oi[j] = j < kk ? idx[j] : -1;
    }
}
