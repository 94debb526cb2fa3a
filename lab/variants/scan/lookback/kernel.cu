// Inclusive int32 prefix sum in one pass: decoupled look-back (Merrill & Garland, 2016).
//
// Each block scans one 4096-element tile and learns the sum of everything before it from the
// tiles before it, so x is read once and y written once: 8n bytes, the compulsory traffic
// (reduce-then-scan reads x twice, 12n). The price is that tiles talk to each other through a
// status word per tile in global memory:
//
//   flag 0  nothing yet (the plan zeroes the array)
//   flag 1  AGGREGATE: the tile's own sum, published as soon as the tile is reduced
//   flag 2  INCLUSIVE: the sum of every element up to the tile's end, published after look-back
//
// A tile walks back over its predecessors a warp at a time, adding AGGREGATEs until it meets an
// INCLUSIVE. Because a tile publishes its AGGREGATE before it waits, nobody waits on a chain: at
// worst it adds up 32 aggregates per step. Flag and value share one 64-bit word written with a
// single store, so a reader can never see a flag without its value (no fence needed between them).
//
// Forward progress: tile ids come from an atomic counter in the order blocks start, not from
// blockIdx, so every tile a block waits for belongs to a block that is already running. With
// blockIdx a block could spin on a predecessor that was never scheduled (the hardware may start
// blocks in any order), and the GPU would hang.
//
// All arithmetic is unsigned: it wraps modulo 2^32 by definition, the int32 wrap-around the kata
// asks for.
#define THREADS 256
#define WARPS (THREADS / 32)
#define VECS 4                   // uint4 vectors per thread: 16 items
#define WARP_ITEMS (32 * 4 * VECS)  // 512 consecutive elements per warp
#define TILE (WARPS * WARP_ITEMS)    // 4096 elements per block
#define FULL 0xffffffffu

#define FLAG_AGGREGATE 1ull
#define FLAG_INCLUSIVE 2ull

typedef unsigned int u32;
typedef unsigned long long u64;

__device__ __forceinline__ u32 warp_inclusive_scan(u32 v, int lane)
{
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const u32 t = __shfl_up_sync(FULL, v, d);
        if (lane >= d) v += t;
    }
    return v;
}

__device__ __forceinline__ u32 warp_sum(u32 v)
{
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(FULL, v, d);
    return v;
}

// Vector j of a lane covers elements base + j*128 + 4*lane .. +3: each load instruction of the
// warp reads 512 contiguous bytes (fully coalesced), and a warp's 4 vectors are 512 consecutive
// elements, scanned as 4 chunks of 128 in order. Scalar, bounds-checked loads only at the end of x.
__device__ __forceinline__ uint4 load4(const int* __restrict__ x, long long i, long long n)
{
    if (i + 4 <= n) return __ldg(reinterpret_cast<const uint4*>(x + i));
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (i < n) v.x = (u32)__ldg(x + i);
    if (i + 1 < n) v.y = (u32)__ldg(x + i + 1);
    if (i + 2 < n) v.z = (u32)__ldg(x + i + 2);
    return v;
}

__device__ __forceinline__ void store4(int* __restrict__ y, long long i, long long n, uint4 v)
{
    if (i + 4 <= n) {
        *reinterpret_cast<uint4*>(y + i) = v;
        return;
    }
    if (i < n) y[i] = (int)v.x;
    if (i + 1 < n) y[i + 1] = (int)v.y;
    if (i + 2 < n) y[i + 2] = (int)v.z;
}

// Status words are read and written through volatile pointers: every spin of the look-back must
// reach L2 (a cached copy would never change), and the 64-bit store is a single transaction.
__device__ __forceinline__ u64 load_status(const u64* status, int tile)
{
    return *reinterpret_cast<const volatile u64*>(status + tile);
}

__device__ __forceinline__ void store_status(u64* status, int tile, u64 flag, u32 value)
{
    *reinterpret_cast<volatile u64*>(status + tile) = (flag << 32) | value;
}

// The sum of every element before `tile`, by warp 0 of its block. Lane i inspects tile - 1 - i;
// the warp waits until all 32 have published something, then adds the aggregates up to and
// including the nearest INCLUSIVE (the lowest lane whose flag says so). Without one in the window,
// it adds all 32 aggregates and moves the window 32 tiles back.
__device__ __forceinline__ u32 look_back(const u64* status, int tile, int lane)
{
    u32 exclusive = 0;
    for (int pred = tile - 1 - lane;; pred -= 32) {
        u64 s;
        do {
            // Before tile 0 there is nothing: an INCLUSIVE of 0 ends the walk there.
            s = pred >= 0 ? load_status(status, pred) : (FLAG_INCLUSIVE << 32);
        } while (__any_sync(FULL, (s >> 32) == 0));
        const u32 inclusive = __ballot_sync(FULL, (s >> 32) == FLAG_INCLUSIVE);
        const int stop = inclusive ? __ffs(inclusive) - 1 : 31;
        exclusive += warp_sum(lane <= stop ? (u32)s : 0u);
        if (inclusive) return exclusive;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
scan_lookback(const int* __restrict__ x, int* __restrict__ y, u64* __restrict__ status,
              u32* __restrict__ tile_counter, int n)
{
    __shared__ int s_tile;
    __shared__ u32 s_warp[WARPS];  // warp totals, then each warp's exclusive prefix in the array
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    if (threadIdx.x == 0) s_tile = (int)atomicAdd(tile_counter, 1u);
    __syncthreads();
    const int tile = s_tile;

    const long long base = (long long)tile * TILE + warp * WARP_ITEMS + 4 * lane;
    uint4 v[VECS];
#pragma unroll
    for (int j = 0; j < VECS; ++j) v[j] = load4(x, base + j * 128, n);

    // Each lane scans its 4 items of every vector; the 4 warp scans of the lane totals are
    // independent, so their shuffles interleave (4 in flight instead of one chain of 20).
    u32 lane_excl[VECS], chunk_before[VECS];
    u32 warp_total = 0;
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        v[j].y += v[j].x;
        v[j].z += v[j].y;
        v[j].w += v[j].z;
    }
    u32 incl[VECS];
#pragma unroll
    for (int j = 0; j < VECS; ++j) incl[j] = v[j].w;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
#pragma unroll
        for (int j = 0; j < VECS; ++j) {
            const u32 t = __shfl_up_sync(FULL, incl[j], d);
            if (lane >= d) incl[j] += t;
        }
    }
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        lane_excl[j] = incl[j] - v[j].w;
        chunk_before[j] = warp_total;  // the chunks before chunk j in this warp
        warp_total += __shfl_sync(FULL, incl[j], 31);
    }
    if (lane == 31) s_warp[warp] = warp_total;
    __syncthreads();

    if (warp == 0) {
        const u32 w = lane < WARPS ? s_warp[lane] : 0u;
        const u32 wincl = warp_inclusive_scan(w, lane);
        const u32 aggregate = __shfl_sync(FULL, wincl, WARPS - 1);
        u32 exclusive = 0;
        if (tile == 0) {
            if (lane == 0) store_status(status, 0, FLAG_INCLUSIVE, aggregate);
        } else {
            // The trick: publish this tile's own sum before waiting on anyone, so successors
            // can skip over this tile while it is still looking back.
            if (lane == 0) store_status(status, tile, FLAG_AGGREGATE, aggregate);
            exclusive = look_back(status, tile, lane);
            if (lane == 0) store_status(status, tile, FLAG_INCLUSIVE, exclusive + aggregate);
        }
        if (lane < WARPS) s_warp[lane] = exclusive + wincl - w;
    }
    __syncthreads();

    const u32 before = s_warp[warp];
#pragma unroll
    for (int j = 0; j < VECS; ++j) {
        const u32 add = before + chunk_before[j] + lane_excl[j];
        store4(y, base + j * 128, n,
               make_uint4(add + v[j].x, add + v[j].y, add + v[j].z, add + v[j].w));
    }
}
