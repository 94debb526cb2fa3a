// A mixture-of-experts layer: Y[t] = sum over t's top-k experts e of w(t, e) · SwiGLU_e(X[t]),
//   SwiGLU_e(x) = (silu(x·Wg_e) * (x·Wu_e))·Wd_e, with W1_e = [Wg | Wu] (H × 2I) and W2_e = Wd (I × H).
// Grouped GEMMs: the (token, slot) pairs are sorted by expert (count, scan, scatter, as in
//   moe-dispatch), so each expert's rows are contiguous and every weight tile is read by a whole
//   128-row tile of that expert's tokens, instead of once per token. GEMM 1 computes a 128-row tile
//   of 64 gate and the same 64 up columns together and applies SwiGLU in its epilogue (the I-wide
//   activation goes to memory once, never the 2I-wide pre-activation); GEMM 2 multiplies by W2 and
//   its epilogue scales by the routing weight and adds into Y[t] (a token's k experts meet there:
//   red.global.add on a zeroed Y; at the bench shape that is 33.5 M coalesced reductions, ~0.1 ms
//   against ~20 ms of FMAs, so a deterministic per-slot buffer plus a sum kernel would buy nothing).
// Both GEMMs are the classic CUDA-core SGEMM (the matmul kata's): a 128×128 block tile, BK = 8,
//   256 threads each owning an 8×8 block of outputs in registers (4 FMAs per float read from shared
//   memory, so the FMA pipe, not shared memory, sets the pace), A staged transposed so both shared
//   reads are float4, tiles double-buffered through registers with one barrier per k-step; when H and
//   I are multiples of 4 (the bench shape) the global loads are float4 too (the _v4 kernels).
//   In GEMM 1 a thread's 8 columns are 4 gate columns and the same 4 up columns (B tile columns
//   0..63 come from Wg, 64..127 from Wu), so SwiGLU pairs registers acc[i][j] and acc[i][j + 4].
// Gather: GEMM 1's A rows are X[order[row] / k], a row pointer per staged row fixed for the whole
//   block; rows past the expert's end are clamped to the tile's first row (finite values whose
//   outputs are never stored), so the inner loop has no row test.
// Tiles: block y indexes the experts' row tiles in order (tile_start, from the scan; experts with
//   no tokens have none), blocks past the last tile exit; block x is the column tile.
#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
// +4 floats of padding: the transposed store of A hits 32 different banks, and rows stay 16-byte
// aligned for the float4 reads.
#define A_LD (BM + 4)

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

// The shared k-loop of both GEMMs: acc += A_tile · B_tile over k < K. Each k-step stages a
// 128 × 8 tile of A and an 8 × 128 tile of B (4 floats of each per thread); columns past K load
// as 0 on both sides. VEC (every row start and column a multiple of 4 floats: H and I multiples
// of 4) stages them with one float4 load each: thread tid reads A row tid/2 at columns
// k0 + (tid%2)*4 .. +3 (a_src[0] points at row tid/2, column (tid%2)*4) and B row k0 + tid/32 at
// columns (tid%32)*4 .. +3 (b_src points at row tid/32 of those columns; ldb floats between rows),
// so a warp reads 16 rows × 32 bytes of A and 512 contiguous bytes of B. The scalar path (any H, I)
// reads A rows tid/8 + 32i (i < 4) at column k0 + tid%8 (a_src[i]: a warp reads 4 rows × 32 bytes)
// and B rows k0 + tid/128 + 2i at column tid%128 (b_src at row tid/128: 128 contiguous bytes).
template <bool VEC>
__device__ __forceinline__ void mainloop(const float* const a_src[4], const float* b_src, size_t ldb, int K,
                                         float acc[8][8]) {
    __shared__ __align__(16) float As[2][BK][A_LD];  // As[k][m]: the A tile, transposed
    __shared__ __align__(16) float Bs[2][BK][BN];    // Bs[k][n]
    const int tid = threadIdx.x;
    const int tx = tid % 16;  // this thread's columns: tx*4 .. tx*4+3 and 64 + tx*4 .. +3
    const int ty = tid / 16;  // this thread's rows:    ty*4 .. ty*4+3 and 64 + ty*4 .. +3
    float4 ra, rb;  // the next k-step's 4 A and 4 B values, between the global load and the shared store
    auto load_tiles = [&](int k0) {
        if (VEC) {
            const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            ra = k0 + (tid % 2) * 4 < K ? *reinterpret_cast<const float4*>(a_src[0] + k0) : zero;
            rb = k0 + tid / 32 < K ? *reinterpret_cast<const float4*>(b_src + (size_t)k0 * ldb) : zero;
        } else {
            const int a_k = k0 + tid % BK, b_k = k0 + tid / BN;
            ra.x = a_k < K ? a_src[0][k0] : 0.0f;
            ra.y = a_k < K ? a_src[1][k0] : 0.0f;
            ra.z = a_k < K ? a_src[2][k0] : 0.0f;
            ra.w = a_k < K ? a_src[3][k0] : 0.0f;
            rb.x = b_k < K ? b_src[(size_t)k0 * ldb] : 0.0f;
            rb.y = b_k + 2 < K ? b_src[(size_t)(k0 + 2) * ldb] : 0.0f;
            rb.z = b_k + 4 < K ? b_src[(size_t)(k0 + 4) * ldb] : 0.0f;
            rb.w = b_k + 6 < K ? b_src[(size_t)(k0 + 6) * ldb] : 0.0f;
        }
    };
    auto store_tiles = [&](int buf) {
        if (VEC) {  // A transposed: lanes hit rows 0..15 of k-rows c and c + 4, 32 distinct banks
            const int r = tid / 2, c = (tid % 2) * 4;
            As[buf][c + 0][r] = ra.x;
            As[buf][c + 1][r] = ra.y;
            As[buf][c + 2][r] = ra.z;
            As[buf][c + 3][r] = ra.w;
            *reinterpret_cast<float4*>(&Bs[buf][tid / 32][(tid % 32) * 4]) = rb;
        } else {
            const int c = tid % BK, r = tid / BK, br = tid / BN, bc = tid % BN;
            As[buf][c][r] = ra.x;
            As[buf][c][r + 32] = ra.y;
            As[buf][c][r + 64] = ra.z;
            As[buf][c][r + 96] = ra.w;
            Bs[buf][br][bc] = rb.x;
            Bs[buf][br + 2][bc] = rb.y;
            Bs[buf][br + 4][bc] = rb.z;
            Bs[buf][br + 6][bc] = rb.w;
        }
    };

    const int tiles = (K + BK - 1) / BK;
    load_tiles(0);
    store_tiles(0);
    __syncthreads();
    for (int t = 0; t < tiles; ++t) {
        const int buf = t & 1;
        // Double buffering: issue the next tile's global loads now; their latency hides behind
        // the 512 FMAs below, and they land in the other buffer, which nobody reads this step.
        if (t + 1 < tiles) load_tiles((t + 1) * BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            // Two float4 reads of A (a broadcast across the 16 tx of a row) and two of B (16
            // consecutive float4s) feed 64 FMAs.
            const float4 a0 = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[buf][k][64 + ty * 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[buf][k][64 + tx * 4]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (t + 1 < tiles) store_tiles(buf ^ 1);
        // One barrier per k-step does both jobs: the other buffer is complete before anyone reads
        // it, and nobody overwrites this buffer (next step) before everyone has finished reading it.
        __syncthreads();
    }
}

// Row i < 8 of a thread's 8×8 block (ty*4 + i, then 64 + ty*4 + i - 4); columns the same with tx.
__device__ __forceinline__ int sub(int t, int i) { return i < 4 ? t * 4 + i : 64 + t * 4 + (i - 4); }

// GEMM 1 and 2 bodies, for both staging paths; the extern "C" kernels below instantiate them.
template <bool VEC>
__device__ __forceinline__ void gemm1(const float* __restrict__ X, const float* __restrict__ W1,
                                      const int* __restrict__ order, const int* __restrict__ offsets,
                                      const int* __restrict__ counts, const int* __restrict__ tile_start,
                                      float* __restrict__ act, int H, int I, int E, int k)
{
    int row0;
    const int e = find_tile(tile_start, offsets, E, blockIdx.y, &row0);
    if (e < 0) return;
    const int end = offsets[e] + counts[e];
    const int tid = threadIdx.x, n0 = blockIdx.x * (BN / 2);
    // Gathered rows of X (past the expert's end, the tile's first row), and this thread's B column:
    // tile columns 0..63 are gate columns n0.., 64..127 the same up columns I + n0.. (past I,
    // clamped to column 0: outputs never stored).
    const float* a_src[4];
    int c;
    if (VEC) {
        const int row = row0 + tid / 2;
        a_src[0] = X + (size_t)(order[row < end ? row : row0] / k) * H + (tid % 2) * 4;
        c = (tid % 32) * 4;
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = row0 + tid / BK + 32 * i;
            a_src[i] = X + (size_t)(order[row < end ? row : row0] / k) * H + tid % BK;
        }
        c = tid % BN;
    }
    const int col = n0 + c % 64, b_row = VEC ? tid / 32 : tid / BN;
    const float* b_src = W1 + (size_t)e * H * 2 * I + (size_t)b_row * 2 * I + (c < 64 ? 0 : I) + (col < I ? col : 0);

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    mainloop<VEC>(a_src, b_src, (size_t)2 * I, H, acc);

    const int tx = tid % 16, ty = tid / 16;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + sub(ty, i);
        if (row >= end) continue;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int n = n0 + tx * 4 + j;
            if (n < I) act[(size_t)row * I + n] = silu(acc[i][j]) * acc[i][j + 4];  // SwiGLU epilogue
        }
    }
}

template <bool VEC>
__device__ __forceinline__ void gemm2(const float* __restrict__ act, const float* __restrict__ W2,
                                      const int* __restrict__ order, const int* __restrict__ offsets,
                                      const int* __restrict__ counts, const int* __restrict__ tile_start,
                                      const float* __restrict__ weights, float* __restrict__ Y, int H, int I,
                                      int E, int k)
{
    int row0;
    const int e = find_tile(tile_start, offsets, E, blockIdx.y, &row0);
    if (e < 0) return;
    const int end = offsets[e] + counts[e];
    const int tid = threadIdx.x, n0 = blockIdx.x * BN;
    const float* a_src[4];  // sorted rows of act; past the expert's end, the tile's first row
    int c;
    if (VEC) {
        const int row = row0 + tid / 2;
        a_src[0] = act + (size_t)(row < end ? row : row0) * I + (tid % 2) * 4;
        c = (tid % 32) * 4;
    } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = row0 + tid / BK + 32 * i;
            a_src[i] = act + (size_t)(row < end ? row : row0) * I + tid % BK;
        }
        c = tid % BN;
    }
    const int col = n0 + c, b_row = VEC ? tid / 32 : tid / BN;
    const float* b_src = W2 + (size_t)e * I * H + (size_t)b_row * H + (col < H ? col : 0);

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    mainloop<VEC>(a_src, b_src, (size_t)H, I, acc);

    const int tx = tid % 16, ty = tid / 16;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = row0 + sub(ty, i);
        if (row >= end) continue;
        const int p = order[row];
        const float wt = weights[p];
        float* y = Y + (size_t)(p / k) * H;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int n = n0 + sub(tx, j);
            if (n < H) atomicAdd(&y[n], wt * acc[i][j]);  // the token's k experts meet here
        }
    }
}

// (THREADS, 2): at most 128 registers per thread, so two blocks (16 warps) share an SM and one
// block's barrier stalls hide behind the other's FMAs. _v4: the float4 staging (H, I multiples of 4).
#define GEMM1_ARGS                                                                                              \
    const float *__restrict__ X, const float *__restrict__ W1, const int *__restrict__ order,                  \
        const int *__restrict__ offsets, const int *__restrict__ counts, const int *__restrict__ tile_start,   \
        float *__restrict__ act, int H, int I, int E, int k
#define GEMM2_ARGS                                                                                              \
    const float *__restrict__ act, const float *__restrict__ W2, const int *__restrict__ order,                \
        const int *__restrict__ offsets, const int *__restrict__ counts, const int *__restrict__ tile_start,   \
        const float *__restrict__ weights, float *__restrict__ Y, int H, int I, int E, int k
extern "C" __global__ void __launch_bounds__(THREADS, 2) moe_gemm1(GEMM1_ARGS) {
    gemm1<false>(X, W1, order, offsets, counts, tile_start, act, H, I, E, k);
}
extern "C" __global__ void __launch_bounds__(THREADS, 2) moe_gemm1_v4(GEMM1_ARGS) {
    gemm1<true>(X, W1, order, offsets, counts, tile_start, act, H, I, E, k);
}
extern "C" __global__ void __launch_bounds__(THREADS, 2) moe_gemm2(GEMM2_ARGS) {
    gemm2<false>(act, W2, order, offsets, counts, tile_start, weights, Y, H, I, E, k);
}
extern "C" __global__ void __launch_bounds__(THREADS, 2) moe_gemm2_v4(GEMM2_ARGS) {
    gemm2<true>(act, W2, order, offsets, counts, tile_start, weights, Y, H, I, E, k);
}
