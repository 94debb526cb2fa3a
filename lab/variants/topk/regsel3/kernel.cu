// Row-wise top-k that reads each row from global memory once: the row's keys stay in registers
// (ITEMS per thread, float4 loads) while a radix select (11 + 11 + 10 bits) finds the k-th largest
// key, a warp-aggregated gather takes everything above it plus just enough keys equal to it, and a
// bitonic sort orders only those P = next_pow2(k) winners.
//
// Why this shape, against the solution (which re-reads the row from L1/L2 for each of its three
// histogram passes and its gather, one scalar load per thread in flight): here a thread issues all
// its float4 loads up front, so a block has its whole row (16 or 64 KB) in flight at once, and
// the later passes only touch registers; the shared-memory atomics after the first pass happen only
// for keys that still match the chosen prefix. The histogram's 2048 bins are scanned by the whole
// block (each thread sums BINS / THREADS bins, two shuffle scans), not walked by one warp.
//
// Keys: flip all bits of negative floats, set the sign bit of positives, so unsigned order is float
// order (-inf < negatives < -0 < +0 < positives < +inf). Key 0 is a NaN pattern no input has: it
// marks the slots past the row's end and pads the sort.
//
// Long rows: a block handles one chunk (ITEMS * THREADS elements) of a row; the launch plan runs
// a kernel again on the chunks' candidates (with their original indices) until one chunk remains.
#define BINS 2048
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

__device__ __forceinline__ void compare_swap(unsigned long long* sk, int i, int j, bool descending)
{
    const unsigned long long a = sk[i], b = sk[j];
    if ((a < b) == descending && a != b) {
        sk[i] = b;
        sk[j] = a;
    }
}

// Bitonic steps of one warp on the 64-element segment sk[base, base + n), two elements per lane
// (positions lane and lane + 32) held in registers: stride 32 compares a lane's own pair, strides
// 16..1 exchange with lane ^ stride by shuffles. Runs sizes size_lo..size_hi (powers of two), each
// from stride min(size / 2, 32) down to 1, with the network's direction for size: descending where
// (position & size) == 0. Slots past n read as 0 (below every key) and are not written back.
__device__ __forceinline__ void warp_steps(unsigned long long* sk, int base, int n, int size_lo, int size_hi)
{
    const int lane = threadIdx.x & 31;
    unsigned long long e0 = lane < n ? sk[base + lane] : 0ull;
    unsigned long long e1 = lane + 32 < n ? sk[base + lane + 32] : 0ull;
    for (int size = size_lo; size <= size_hi; size <<= 1) {
        const bool d0 = ((base + lane) & size) == 0, d1 = ((base + lane + 32) & size) == 0;
        for (int stride = min(size >> 1, 32); stride > 0; stride >>= 1) {
            if (stride == 32) {
                const unsigned long long hi = e0 > e1 ? e0 : e1, lo = e0 > e1 ? e1 : e0;
                e0 = d0 ? hi : lo;
                e1 = d0 ? lo : hi;
            } else {
                const bool lower = (lane & stride) == 0;  // this lane holds the pair's lower position
                const unsigned long long w0 = __shfl_xor_sync(0xffffffffu, e0, stride);
                const unsigned long long w1 = __shfl_xor_sync(0xffffffffu, e1, stride);
                e0 = (lower == d0) == (e0 > w0) ? e0 : w0;  // the lower position keeps the max when descending
                e1 = (lower == d1) == (e1 > w1) ? e1 : w1;
            }
        }
    }
    if (lane < n) sk[base + lane] = e0;
    if (lane + 32 < n) sk[base + lane + 32] = e1;
}

// Bitonic sort of sk[0, P), descending. Strides <= 32 run in registers (warp_steps), one pass per
// size, so of the 55 steps for P = 1024 only the 10 with strides >= 64 go through shared memory,
// each with one block barrier. P <= 64 is sorted by warp 0 alone.
template <int THREADS>
__device__ __forceinline__ void block_sort(unsigned long long* sk, int P)
{
    constexpr int WARPS = THREADS / 32;
    const int warp = threadIdx.x >> 5;
    if (P <= 64) {
        if (warp == 0) warp_steps(sk, 0, P, 2, P);
        __syncthreads();
        return;
    }
    for (int seg = warp; seg < P / 64; seg += WARPS) warp_steps(sk, 64 * seg, 64, 2, 64);
    __syncthreads();
    for (int size = 128; size <= P; size <<= 1) {
        for (int stride = size >> 1; stride >= 64; stride >>= 1) {
            for (int t = threadIdx.x; t < P / 2; t += THREADS) {
                const int i = 2 * t - (t & (stride - 1));
                compare_swap(sk, i, i + stride, (i & size) == 0);
            }
            __syncthreads();
        }
        for (int seg = warp; seg < P / 64; seg += WARPS) warp_steps(sk, 64 * seg, 64, size, size);
        __syncthreads();
    }
}

// The whole block finds the digit holding the rem-th largest key of hist[0, bins). Thread t owns
// bins [BINS - PER * (t + 1), BINS - PER * t) of the 2048-wide view (thread 0 the top ones); bins
// past `bins` are zero. Returns the digit and, through *rem, how many keys of that digit still
// belong to the top k. Ends with the block synchronised.
template <int THREADS>
__device__ __forceinline__ int find_digit(const unsigned* hist, int* rem, int* s_warp, int* s_pick)
{
    constexpr int PER = BINS / THREADS;
    constexpr int WARPS = THREADS / 32;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int lo = BINS - PER * (threadIdx.x + 1);
    // Vector reads: PER consecutive words per lane put lanes 8 words apart (8-way bank conflicts
    // with scalar reads); uint4 reads cut the wavefronts per warp fourfold.
    int sum = 0;
    if constexpr (PER % 4 == 0) {
#pragma unroll
        for (int b = 0; b < PER; b += 4) {
            const uint4 v = *reinterpret_cast<const uint4*>(hist + lo + b);
            sum += (int)(v.x + v.y + v.z + v.w);
        }
    } else {
#pragma unroll
        for (int b = 0; b < PER; ++b) sum += (int)hist[lo + b];
    }
    int incl = sum;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int t = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += t;
    }
    if (lane == 31) s_warp[warp] = incl;
    __syncthreads();
    // Every warp scans the warp totals itself: one barrier instead of two.
    int w = lane < WARPS ? s_warp[lane] : 0;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const int t = __shfl_up_sync(0xffffffffu, w, d);
        if (lane >= d) w += t;
    }
    const int before = __shfl_sync(0xffffffffu, w, warp) - s_warp[warp];
    incl += before;
    const int excl = incl - sum;
    const int want = *rem;
    if (excl < want && want <= incl) {
        int acc = excl, b = lo + PER - 1;
        while (acc + (int)hist[b] < want) acc += (int)hist[b--];
        s_pick[0] = b;
        s_pick[1] = want - acc;
    }
    __syncthreads();
    *rem = s_pick[1];
    return s_pick[0];
}

// Block (c, r): chunk c of row r, elements [c * chunk, min((c + 1) * chunk, L)) of in_vals's row r
// (row_stride apart), chunk = ITEMS * THREADS. Writes that chunk's top min(k, chunk length) sorted
// descending to out_vals/out_idx at r * out_stride + c * k, padded with sentinels up to k.
template <int THREADS, int ITEMS>
__device__ __forceinline__ void topk_block(const float* __restrict__ in_vals, const int* __restrict__ in_idx,
                                           int has_idx, int L, long long row_stride, int k, int P,
                                           float* __restrict__ out_vals, int* __restrict__ out_idx,
                                           long long out_stride)
{
    constexpr int CHUNK = THREADS * ITEMS;
    // The P winners as (key << 32 | index): one 64-bit compare-and-swap per sort step instead of
    // two 32-bit arrays; among equal keys the larger index sorts first, which the contract allows.
    extern __shared__ unsigned long long sk[];  // P
    __shared__ __align__(16) unsigned hist[BINS];
    __shared__ int s_warp[32], s_pick[2], s_gt, s_eq;

    const int c = blockIdx.x, r = blockIdx.y;
    const int first = c * CHUNK;
    const int n = min(CHUNK, L - first);
    const int kk = min(k, n);
    const float* src = in_vals + r * row_stride + first;
    const int tid = threadIdx.x;

    for (int b = 4 * tid; b < BINS; b += 4 * THREADS) *reinterpret_cast<uint4*>(hist + b) = make_uint4(0u, 0u, 0u, 0u);
    if (tid == 0) {
        s_gt = 0;
        s_eq = 0;
    }

    // Item (j) of thread t is element pos(j): float4 layout when the chunk is 16-byte aligned and
    // a multiple of 4 long (then a warp's load instruction reads 512 contiguous bytes), else
    // element j * THREADS + t.
    const bool vec = ((reinterpret_cast<unsigned long long>(src) & 15ull) == 0) && (n & 3) == 0;
    unsigned keys[ITEMS];
    if (vec) {
#pragma unroll
        for (int j = 0; j < ITEMS / 4; ++j) {
            const int e = 4 * (j * THREADS + tid);
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (e < n) v = __ldg(reinterpret_cast<const float4*>(src + e));
            keys[4 * j + 0] = e < n ? key_of(v.x) : SENTINEL_KEY;
            keys[4 * j + 1] = e < n ? key_of(v.y) : SENTINEL_KEY;
            keys[4 * j + 2] = e < n ? key_of(v.z) : SENTINEL_KEY;
            keys[4 * j + 3] = e < n ? key_of(v.w) : SENTINEL_KEY;
        }
    } else {
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const int e = j * THREADS + tid;
            keys[j] = e < n ? key_of(__ldg(src + e)) : SENTINEL_KEY;
        }
    }
    __syncthreads();  // hist zeroed

    // Radix select, most significant digits first: 11 + 11 + 10 bits, on the registers.
    int rem = kk;
    unsigned prefix = 0u, mask = 0u;
#pragma unroll
    for (int pass = 0; pass < 3; ++pass) {
        const int s = pass == 0 ? 21 : pass == 1 ? 10 : 0;
        const unsigned dmask = pass == 2 ? 0x3ffu : 0x7ffu;
        if (pass > 0) {
            for (int b = 4 * tid; b < BINS; b += 4 * THREADS)
                *reinterpret_cast<uint4*>(hist + b) = make_uint4(0u, 0u, 0u, 0u);
            __syncthreads();
        }
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            const unsigned key = keys[j];
            if (key != SENTINEL_KEY && (key & mask) == prefix) atomicAdd(hist + ((key >> s) & dmask), 1u);
        }
        __syncthreads();
        const int digit = find_digit<THREADS>(hist, &rem, s_warp, s_pick);
        prefix |= (unsigned)digit << s;
        mask |= dmask << s;
    }
    // prefix is the k-th largest key; rem of the keys equal to it belong to the top k.
    const unsigned threshold = prefix;
    const int ties = rem;
    const int above = kk - ties;

    // Gather, one ballot per item and warp: every key above the threshold, then the first `ties`
    // keys equal to it (any of them is a valid answer, but no more than fit).
    const int lane = tid & 31;
    const unsigned lower = (1u << lane) - 1u;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        const unsigned key = keys[j];
        const unsigned gt = __ballot_sync(0xffffffffu, key > threshold);
        const unsigned eq = __ballot_sync(0xffffffffu, key == threshold);
        if ((gt | eq) == 0u) continue;  // warp-uniform
        int base_gt = 0, base_eq = 0;
        if (lane == 0) {
            if (gt) base_gt = atomicAdd(&s_gt, __popc(gt));
            if (eq) base_eq = atomicAdd(&s_eq, __popc(eq));
        }
        base_gt = __shfl_sync(0xffffffffu, base_gt, 0);
        base_eq = __shfl_sync(0xffffffffu, base_eq, 0);
        int slot = -1;
        if (key > threshold) {
            slot = base_gt + __popc(gt & lower);
        } else if (key == threshold) {
            const int e = base_eq + __popc(eq & lower);
            if (e < ties) slot = above + e;
        }
        if (slot >= 0) {
            const int pos = vec ? 4 * ((j >> 2) * THREADS + tid) + (j & 3) : j * THREADS + tid;
            const int idx = has_idx ? __ldg(in_idx + r * row_stride + first + pos) : first + pos;
            sk[slot] = ((unsigned long long)key << 32) | (unsigned)idx;
        }
    }
    for (int j = kk + tid; j < P; j += THREADS) {
        sk[j] = ((unsigned long long)SENTINEL_KEY << 32) | 0xffffffffull;
    }
    __syncthreads();

    block_sort<THREADS>(sk, P);  // descending; ends with the block synchronised

    float* ov = out_vals + r * out_stride + (long long)c * k;
    int* oi = out_idx + r * out_stride + (long long)c * k;
    for (int j = tid; j < k; j += THREADS) {
        const unsigned long long e = sk[j];  // slots kk..P-1 hold the sentinel
        ov[j] = value_of(j < kk ? (unsigned)(e >> 32) : SENTINEL_KEY);
        oi[j] = j < kk ? (int)(unsigned)e : -1;
    }
}

// Rows (or chunks) of up to 4096 elements: 256 threads x 16 keys.
extern "C" __global__ void __launch_bounds__(256, 6)
topk_4k(const float* __restrict__ in_vals, const int* __restrict__ in_idx, int has_idx, int L,
        long long row_stride, int k, int P, float* __restrict__ out_vals, int* __restrict__ out_idx,
        long long out_stride)
{
    topk_block<256, 16>(in_vals, in_idx, has_idx, L, row_stride, k, P, out_vals, out_idx, out_stride);
}

// Rows (or chunks) of up to 16384 elements: 512 threads x 32 keys (P / 2 = 512 sort pairs for k = 1024:
// one per thread).
extern "C" __global__ void __launch_bounds__(512, 2)
topk_16k(const float* __restrict__ in_vals, const int* __restrict__ in_idx, int has_idx, int L,
         long long row_stride, int k, int P, float* __restrict__ out_vals, int* __restrict__ out_idx,
         long long out_stride)
{
    topk_block<512, 32>(in_vals, in_idx, has_idx, L, row_stride, k, P, out_vals, out_idx, out_stride);
}
