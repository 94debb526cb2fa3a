// Single-pass inclusive scan with decoupled look-back (Merrill & Garland): tiles are numbered by
// an atomic counter, publish their aggregate, then spin on their predecessors' status words.
#define BLOCK 128
#define FLAG_AGG 1ull
#define FLAG_PREFIX 2ull

__device__ __forceinline__ unsigned long long pack(unsigned long long flag, int v) {
    return (flag << 32) | (unsigned)v;
}

extern "C" __global__ void scan_lookback(const int* in, int* out, int n, unsigned* tile_counter,
                                         unsigned long long* status) {
    __shared__ int warp_tot[BLOCK / 32];
    __shared__ int s_tile, s_excl;
    if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
    __syncthreads();
    int tile = s_tile;
    int i = tile * BLOCK + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
    for (int d = 1; d < 32; d <<= 1) {  // warp inclusive scan with shuffles
        int up = __shfl_up_sync(0xffffffffu, v, d);
        if (lane >= d) v += up;
    }
    if (lane == 31) warp_tot[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = lane < BLOCK / 32 ? warp_tot[lane] : 0;
        for (int d = 1; d < BLOCK / 32; d <<= 1) {
            int up = __shfl_up_sync(0xffffffffu, w, d);
            if (lane >= d) w += up;
        }
        if (lane < BLOCK / 32) warp_tot[lane] = w;  // now inclusive over warps
    }
    __syncthreads();
    if (warp > 0) v += warp_tot[warp - 1];
    if (threadIdx.x == 0) {
        int aggregate = warp_tot[BLOCK / 32 - 1];
        volatile unsigned long long* st = status;
        if (tile == 0) {
            atomicExch(&status[0], pack(FLAG_PREFIX, aggregate));
            s_excl = 0;
        } else {
            atomicExch(&status[tile], pack(FLAG_AGG, aggregate));
            int excl = 0;
            int j = tile - 1;
            while (true) {
                unsigned long long word = st[j];
                unsigned long long flag = word >> 32;
                if (flag == 0) continue;  // predecessor not published yet: spin
                excl += (int)(unsigned)word;
                if (flag == FLAG_PREFIX) break;
                --j;
            }
            __threadfence();
            atomicExch(&status[tile], pack(FLAG_PREFIX, excl + aggregate));
            s_excl = excl;
        }
    }
    __syncthreads();
    if (i < n) out[i] = v + s_excl;
}
