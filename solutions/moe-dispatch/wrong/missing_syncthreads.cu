// kata-expect: race-raw
// The scan over warps reads every warp's per-expert counts with no barrier after the warps write them.
// MoE token dispatch in three passes: chunk histograms with stable ranks, a scan per expert, and a
// scatter that reads each token row once and writes it to both of its destinations.
//
// Stability is the trap. The destination of assignment s (= 2 * token + k) with expert e is
//   offsets[e] + (assignments to e in earlier chunks) + (assignments to e earlier in s's chunk),
// so every place is computed, never claimed: an atomicAdd per assignment would hand out places in
// arrival order, which changes from run to run.
//  1. moe_rank: a block per chunk of 256 assignments. In a warp, __match_any_sync groups the lanes
//     with the same expert: a lane's rank is the number of those lanes below it, and the lowest
//     one writes the group's size. A scan over the block's 8 warps per expert turns warp ranks
//     into chunk ranks; the chunk's per-expert totals go to chunk_hist[chunk][e].
//  2. moe_scan: one block. Per expert, a warp scans chunk_hist over the chunks 32 at a time (each
//     entry becomes its chunk's base); then the per-expert totals are counts, and a block scan of
//     them gives offsets.
//  3. moe_scatter: a warp per token. Lanes 0 and 1 compute the two destinations and write perm;
//     the whole warp copies the row once from x to both (float4 when D % 4 == 0). Gathering each
//     output row from x instead would read x twice: 16ND bytes instead of 12ND.
#define FULL 0xffffffffu
#define CHUNK 256  // assignments per moe_rank block: 8 warps
#define WARPS (CHUNK / 32)

extern "C" __global__ void moe_rank(const int* __restrict__ topk_ids, int* __restrict__ chunk_hist,
                                    int* __restrict__ rank, int N, int E)
{
    extern __shared__ int warp_hist[];  // [WARPS][E]: experts' counts per warp, then their bases
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int i = threadIdx.x; i < WARPS * E; i += CHUNK) warp_hist[i] = 0;  // experts a warp lacks
    __syncthreads();

    const int s = blockIdx.x * CHUNK + threadIdx.x;
    const bool valid = s < 2 * N;
    const int e = valid ? topk_ids[s] : -1;
    const unsigned active = __ballot_sync(FULL, valid);
    int r = 0;
    if (valid) {
        const unsigned peers = __match_any_sync(active, e);  // lanes of this warp with expert e
        r = __popc(peers & ((1u << lane) - 1));               // how many of them come before me
        if (r == 0) warp_hist[warp * E + e] = __popc(peers);   // the lowest lane speaks for all
    }

    // Per expert, an exclusive scan over the warps in order: warp w's base inside the chunk.
    for (int ex = threadIdx.x; ex < E; ex += CHUNK) {
        int run = 0;
        for (int w = 0; w < WARPS; ++w) {
            const int v = warp_hist[w * E + ex];
            warp_hist[w * E + ex] = run;
            run += v;
        }
        chunk_hist[(size_t)blockIdx.x * E + ex] = run;
    }
    __syncthreads();  // bases written before any lane reads its own
    if (valid) rank[s] = warp_hist[warp * E + e] + r;
}

extern "C" __global__ void moe_scan(int* __restrict__ chunk_hist, int* __restrict__ counts,
                                    int* __restrict__ offsets, int chunks, int E)
{
    __shared__ int total[1024];  // per expert, then the block scan's per-warp sums
    __shared__ int warp_sum[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;

    // Per expert (a warp each, round robin): exclusive scan of its count over the chunks, 32 chunks
    // per step with shuffles. Lanes read entries E apart; the table is small and L2-resident.
    for (int ex = warp; ex < E; ex += warps) {
        int run = 0;
        for (int c0 = 0; c0 < chunks; c0 += 32) {
            const int c = c0 + lane;
            const int v = c < chunks ? chunk_hist[(size_t)c * E + ex] : 0;
            int inc = v;
            for (int off = 1; off < 32; off <<= 1) {
                const int t = __shfl_up_sync(FULL, inc, off);
                if (lane >= off) inc += t;
            }
            if (c < chunks) chunk_hist[(size_t)c * E + ex] = run + inc - v;
            run += __shfl_sync(FULL, inc, 31);
        }
        if (lane == 0) total[ex] = run;
    }
    __syncthreads();

    // Block-wide exclusive scan of the E totals (E <= 1024 = blockDim.x): offsets.
    const int v = threadIdx.x < E ? total[threadIdx.x] : 0;
    int inc = v;
    for (int off = 1; off < 32; off <<= 1) {
        const int t = __shfl_up_sync(FULL, inc, off);
        if (lane >= off) inc += t;
    }
    if (lane == 31) warp_sum[warp] = inc;
    __syncthreads();
    if (warp == 0) {
        const int w = lane < warps ? warp_sum[lane] : 0;
        int winc = w;
        for (int off = 1; off < 32; off <<= 1) {
            const int t = __shfl_up_sync(FULL, winc, off);
            if (lane >= off) winc += t;
        }
        warp_sum[lane] = winc - w;  // exclusive: the sum of the warps before
    }
    __syncthreads();
    if (threadIdx.x < E) {
        counts[threadIdx.x] = v;
        offsets[threadIdx.x] = warp_sum[warp] + inc - v;
    }
}

extern "C" __global__ void moe_scatter(const int* __restrict__ topk_ids, const float* __restrict__ x,
                                       const int* __restrict__ chunk_hist, const int* __restrict__ rank,
                                       const int* __restrict__ offsets, int* __restrict__ perm,
                                       float* __restrict__ gathered, int N, int E, int D)
{
    const int lane = threadIdx.x & 31;
    const int t = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);  // this warp's token
    if (t >= N) return;  // whole warps leave together: no shuffle below misses a lane

    int dest = 0;
    if (lane < 2) {
        const int s = 2 * t + lane;
        const int e = topk_ids[s];
        dest = offsets[e] + chunk_hist[(size_t)(s / CHUNK) * E + e] + rank[s];
        perm[dest] = s;
    }
    const size_t d0 = (size_t)__shfl_sync(FULL, dest, 0) * D;
    const size_t d1 = (size_t)__shfl_sync(FULL, dest, 1) * D;
    const size_t src = (size_t)t * D;

    if ((D & 3) == 0) {
        // Rows are 16-byte aligned: float4, a warp moving 512 contiguous bytes per instruction; 4
        // iterations unrolled keep 2 KB of loads in flight per warp.
        const int d4 = D >> 2;
        const float4* in = reinterpret_cast<const float4*>(x + src);
        float4* o0 = reinterpret_cast<float4*>(gathered + d0);
        float4* o1 = reinterpret_cast<float4*>(gathered + d1);
#pragma unroll 4
        for (int i = lane; i < d4; i += 32) {
            const float4 v = in[i];
            o0[i] = v;
            o1[i] = v;
        }
    } else {
        for (int i = lane; i < D; i += 32) {
            const float v = x[src + i];
            gathered[d0 + i] = v;
            gathered[d1 + i] = v;
        }
    }
}
