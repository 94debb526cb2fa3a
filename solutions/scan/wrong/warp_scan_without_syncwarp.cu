// kata-expect: race-raw
// The shared-memory warp scan assumes lanes run in lockstep; since Volta each step must be ordered by __syncwarp().
#define THREADS 256
#define ITEMS 4  // one 16-byte vector per thread per tile
#define TILE (THREADS * ITEMS)
#define WARPS (THREADS / 32)

typedef unsigned int u32;

__device__ __forceinline__ u32 warp_inclusive_scan(u32 v, int lane)
{
    // Pre-Volta warp-synchronous style: volatile shared memory, no __syncwarp between steps.
    __shared__ volatile u32 ws[THREADS];
    volatile u32* w = ws + (threadIdx.x & ~31);
    w[lane] = v;
    for (int d = 1; d < 32; d <<= 1) {
        if (lane >= d) w[lane] += w[lane - d];
    }
    return w[lane];
}

__device__ __forceinline__ u32 warp_sum(u32 v)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

// The 4 consecutive elements thread t owns in the tile at `base`: one uint4 load when all are in
// range (a warp reads 512 contiguous bytes), scalar loads with bounds checks only in the last tile.
__device__ __forceinline__ uint4 load_items(const int* __restrict__ x, long long base, int n)
{
    const long long i = base + ITEMS * threadIdx.x;
    if (i + ITEMS <= n) return __ldg(reinterpret_cast<const uint4*>(x + i));
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (i < n) v.x = (u32)x[i];
    if (i + 1 < n) v.y = (u32)x[i + 1];
    if (i + 2 < n) v.z = (u32)x[i + 2];
    return v;
}

// Exclusive scan of one value per thread across the block; *total gets the block's sum.
// s has room for two rounds of WARPS + 1 words; the caller alternates rounds, so a round's writes
// happen only after the next round's first barrier, which every reader of this round has passed.
// That saves the third barrier a single buffer would need before it is overwritten.
__device__ __forceinline__ u32 block_exclusive_scan(u32 v, u32* s, u32* total)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const u32 incl = warp_inclusive_scan(v, lane);
    if (lane == 31) s[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const u32 w = lane < WARPS ? s[lane] : 0u;
        const u32 wi = warp_inclusive_scan(w, lane);
        if (lane < WARPS) s[lane] = wi - w;
        if (lane == WARPS - 1) s[WARPS] = wi;
    }
    __syncthreads();
    *total = s[WARPS];
    return s[warp] + incl - v;
}

extern "C" __global__ void __launch_bounds__(THREADS, 8)
scan_reduce(const int* __restrict__ x, u32* __restrict__ chunk_sums, int n, int chunk)
{
    const long long begin = (long long)blockIdx.x * chunk;
    const long long end = min(begin + chunk, (long long)n);
    u32 sum = 0;
    // Two tiles per iteration: two independent 16-byte loads in flight per thread hide latency.
    long long base = begin;
    for (; base + 2 * TILE <= end; base += 2 * TILE) {
        const uint4 a = load_items(x, base, n);
        const uint4 b = load_items(x, base + TILE, n);
        sum += (a.x + a.y) + (a.z + a.w) + (b.x + b.y) + (b.z + b.w);
    }
    for (; base < end; base += TILE) {
        const uint4 a = load_items(x, base, n);
        sum += (a.x + a.y) + (a.z + a.w);
    }
    __shared__ u32 s[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    sum = warp_sum(sum);
    if (lane == 0) s[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = warp_sum(lane < WARPS ? s[lane] : 0u);
        if (lane == 0) chunk_sums[blockIdx.x] = sum;
    }
}

// One block: exclusive scan of the chunk sums in place, THREADS at a time with a running carry.
extern "C" __global__ void __launch_bounds__(THREADS, 8)
scan_chunk_sums(u32* __restrict__ sums, int count)
{
    __shared__ u32 s[2][WARPS + 1];
    u32 carry = 0;
    int round = 0;
    for (int base = 0; base < count; base += THREADS, round ^= 1) {
        const int i = base + threadIdx.x;
        const u32 v = i < count ? sums[i] : 0u;
        u32 total;
        const u32 excl = block_exclusive_scan(v, s[round], &total);
        if (i < count) sums[i] = carry + excl;
        carry += total;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 8)
scan_downsweep(const int* __restrict__ x, int* __restrict__ y, const u32* __restrict__ offsets,
               int n, int chunk)
{
    __shared__ u32 s[2][WARPS + 1];
    const long long begin = (long long)blockIdx.x * chunk;
    const long long end = min(begin + chunk, (long long)n);
    // The carry: everything before this tile. It lives in a register for the whole chunk.
    u32 carry = offsets[blockIdx.x];
    int round = 0;
    uint4 next = load_items(x, begin, n);
    for (long long base = begin; base < end; base += TILE, round ^= 1) {
        const uint4 v = next;
        // Prefetch the next tile before the barriers of this one, so a load is always in flight.
        if (base + TILE < end) next = load_items(x, base + TILE, n);

        // Sequential scan of the thread's 4 items, then one block scan of the thread totals.
        const u32 a0 = v.x, a1 = a0 + v.y, a2 = a1 + v.z, a3 = a2 + v.w;
        u32 total;
        const u32 before = carry + block_exclusive_scan(a3, s[round], &total);
        carry += total;

        const long long i = base + ITEMS * threadIdx.x;
        if (i + ITEMS <= n) {
            *reinterpret_cast<uint4*>(y + i) = make_uint4(before + a0, before + a1, before + a2, before + a3);
        } else {
            if (i < n) y[i] = (int)(before + a0);
            if (i + 1 < n) y[i + 1] = (int)(before + a1);
            if (i + 2 < n) y[i + 2] = (int)(before + a2);
        }
    }
}
