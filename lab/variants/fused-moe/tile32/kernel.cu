// A mixture-of-experts layer: Y[t] = sum over t's top-k experts e of w(t, e) · SwiGLU_e(X[t]),
//   SwiGLU_e(x) = (silu(x·Wg_e) * (x·Wu_e))·Wd_e, with W1_e = [Wg | Wu] (H × 2I) and W2_e = Wd (I × H).
// Grouped GEMMs: the (token, slot) pairs are sorted by expert (count, scan, scatter, as in
//   moe-dispatch), so each expert's rows are contiguous and every weight tile is read by a whole
//   tile of that expert's tokens, instead of once per token. GEMM 1 computes a 32-row tile of the
//   gate and up projections together and applies SwiGLU in its epilogue (the I-wide activation
//   goes to memory once, never the 2I-wide pre-activation); GEMM 2 multiplies by W2 and its
//   epilogue scales by the routing weight and adds into Y[t] (atomicAdd: a token's k experts meet there).
// Tiles: 32 rows × 32 columns per 256-thread block (each thread 2 × 2 outputs, of gate and up in
//   GEMM 1), BK = 16 through shared memory. Block y indexes the experts' tiles in order
//   (tile_start, from the scan); blocks past the last tile exit.
#define BM 32
#define BN 32
#define BK 16

extern "C" __global__ void moe_count(const int* __restrict__ ids, int* __restrict__ counts, int pairs) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < pairs) atomicAdd(&counts[ids[p]], 1);
}

// One thread: E is small. offsets: exclusive sum of counts; tile_start: of cdiv(count, BM).
extern "C" __global__ void moe_scan(const int* __restrict__ counts, int* __restrict__ offsets, int* __restrict__ fill,
                                    int* __restrict__ tile_start, int E) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    int off = 0, tiles = 0;
    for (int e = 0; e < E; e++) {
        offsets[e] = fill[e] = off;
        tile_start[e] = tiles;
        off += counts[e];
        tiles += (counts[e] + BM - 1) / BM;
    }
    tile_start[E] = tiles;
}

extern "C" __global__ void moe_scatter(const int* __restrict__ ids, int* __restrict__ fill, int* __restrict__ order,
                                       int pairs) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < pairs) order[atomicAdd(&fill[ids[p]], 1)] = p;
}

// The expert and the first sorted row of tile `tile` (-1: past the last tile).
__device__ int find_tile(const int* tile_start, const int* offsets, int E, int tile, int* row0) {
    if (tile >= tile_start[E]) return -1;
    int e = 0;
    while (tile_start[e + 1] <= tile) e++;
    *row0 = offsets[e] + (tile - tile_start[e]) * BM;
    return e;
}

__device__ __forceinline__ float silu(float g) { return g / (1.0f + __expf(-g)); }

extern "C" __global__ void __launch_bounds__(256) moe_gemm1(
    const float* __restrict__ X, const float* __restrict__ W1, const int* __restrict__ order,
    const int* __restrict__ offsets, const int* __restrict__ counts, const int* __restrict__ tile_start,
    float* __restrict__ act, int H, int I, int E, int k)
{
    __shared__ float sx[BM][BK + 1], sg[BK][BN], su[BK][BN];
    int row0;
    const int e = find_tile(tile_start, offsets, E, blockIdx.y, &row0);
    if (e < 0) return;
    const int end = offsets[e] + counts[e];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16, n0 = blockIdx.x * BN;
    const float* w = W1 + (size_t)e * H * 2 * I;
    float g[2][2] = {}, u[2][2] = {};
    for (int k0 = 0; k0 < H; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) {  // rows of X gathered by token
            int r = i / BK, c = i % BK, row = row0 + r;
            sx[r][c] = row < end && k0 + c < H ? X[(size_t)(order[row] / k) * H + k0 + c] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += 256) {
            int r = i / BN, c = i % BN;
            bool in = k0 + r < H && n0 + c < I;
            sg[r][c] = in ? w[(size_t)(k0 + r) * 2 * I + n0 + c] : 0.0f;
            su[r][c] = in ? w[(size_t)(k0 + r) * 2 * I + I + n0 + c] : 0.0f;
        }
        __syncthreads();  // the tiles are complete before anyone multiplies
#pragma unroll
        for (int kk = 0; kk < BK; kk++)
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++) {
                    g[a][b] += sx[ty * 2 + a][kk] * sg[kk][tx * 2 + b];
                    u[a][b] += sx[ty * 2 + a][kk] * su[kk][tx * 2 + b];
                }
        __syncthreads();  // everyone is done with the tiles before the next fill
    }
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++) {
            int row = row0 + ty * 2 + a, col = n0 + tx * 2 + b;
            if (row < end && col < I) act[(size_t)row * I + col] = silu(g[a][b]) * u[a][b];  // SwiGLU epilogue
        }
}

extern "C" __global__ void __launch_bounds__(256) moe_gemm2(
    const float* __restrict__ act, const float* __restrict__ W2, const int* __restrict__ order,
    const int* __restrict__ offsets, const int* __restrict__ counts, const int* __restrict__ tile_start,
    const float* __restrict__ weights, float* __restrict__ Y, int H, int I, int E, int k)
{
    __shared__ float sa[BM][BK + 1], sw[BK][BN];
    int row0;
    const int e = find_tile(tile_start, offsets, E, blockIdx.y, &row0);
    if (e < 0) return;
    const int end = offsets[e] + counts[e];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16, n0 = blockIdx.x * BN;
    const float* w = W2 + (size_t)e * I * H;
    float acc[2][2] = {};
    for (int k0 = 0; k0 < I; k0 += BK) {
        for (int i = threadIdx.x; i < BM * BK; i += 256) {
            int r = i / BK, c = i % BK, row = row0 + r;
            sa[r][c] = row < end && k0 + c < I ? act[(size_t)row * I + k0 + c] : 0.0f;
        }
        for (int i = threadIdx.x; i < BK * BN; i += 256) {
            int r = i / BN, c = i % BN;
            sw[r][c] = k0 + r < I && n0 + c < H ? w[(size_t)(k0 + r) * H + n0 + c] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk++)
#pragma unroll
            for (int a = 0; a < 2; a++)
#pragma unroll
                for (int b = 0; b < 2; b++) acc[a][b] += sa[ty * 2 + a][kk] * sw[kk][tx * 2 + b];
        __syncthreads();
    }
    for (int a = 0; a < 2; a++) {
        int row = row0 + ty * 2 + a;
        if (row >= end) continue;
        int p = order[row];
        float wt = weights[p];
        for (int b = 0; b < 2; b++) {
            int col = n0 + tx * 2 + b;
            if (col < H) atomicAdd(&Y[(size_t)(p / k) * H + col], wt * acc[a][b]);  // the token's k experts meet here
        }
    }
}
