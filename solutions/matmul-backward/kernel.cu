// Matmul backward, dX = dY·Wᵀ and dW = Xᵀ·dY (float32, row-major), with one register-tiled GEMM
// (the matmul solution's design: 128×128 block tile, BK = 8, 256 threads × 8×8 outputs in
// registers, double-buffered shared tiles) templated on how each operand is strided.
//
// No transposed copy is ever written. The GEMM computes C[i][j] = sum_p A(i,p)·B(p,j), and each
// operand is read in place with whichever strides it has:
//   * contraction index p contiguous (dY and W for dX): a warp reads 4 rows × 8 consecutive floats
//     and stores them transposed into shared memory;
//   * output index contiguous (X and dY for dW): a warp reads 128 consecutive floats of one p row
//     and stores them as they are.
// Either way shared memory ends up as As[p][i] and Bs[p][j], so the inner loop is the same float4
// broadcast-and-FMA loop for both products.
//
// Split-K for dW: dW is K×N (64 tiles at the bench shape), but every element sums over M = 16384
// tokens. One block per tile would occupy 64 of 132 SMs for a 16384-long loop; instead blockIdx.z
// takes a slice of M, each slice writes a float32 partial tile, and sum_partials adds the S
// partials in a fixed order (deterministic, no atomics, no zeroing of dW needed).
#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
// +4 floats of padding: the transposed stores hit 32 different banks, rows stay 16-byte aligned.
#define LD (BM + 4)

// Loads of one 128×8 operand tile, 4 elements per thread, into registers, and their shared store.
// P_FAST: the contraction index p is the contiguous one (element (r, p) at base[r * ld + p]);
// otherwise r is (element (r, p) at base[p * ld + r]). rows: the operand's extent along r.
template <bool P_FAST>
struct TileLoader {
    const float* ptr;
    int r_first, p_first, rows, ld;
    float v[4];

    __device__ TileLoader(const float* base, int ld_, int r0, int rows_, int tid) : rows(rows_), ld(ld_)
    {
        // P_FAST: thread tid takes rows r0 + tid/8 + 32q at p offset tid%8 (p fastest over lanes);
        // else rows r0 + tid%128 at p offsets tid/128 + 2q (r fastest over lanes). Coalesced both ways.
        r_first = P_FAST ? r0 + tid / BK : r0 + tid % BM;
        p_first = P_FAST ? tid % BK : tid / BM;
        ptr = P_FAST ? base + (size_t)r_first * ld + p_first : base + (size_t)p_first * ld + r_first;
    }

    __device__ void load(int p0, int p_end)  // p0: the tile's first p; p_end: the slice's end
    {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            if (P_FAST) {
                const bool in = r_first + 32 * q < rows && p0 + p_first < p_end;
                v[q] = in ? ptr[(size_t)(32 * q) * ld + p0] : 0.0f;
            } else {
                const bool in = p0 + p_first + 2 * q < p_end && r_first < rows;
                v[q] = in ? ptr[(size_t)(p0 + 2 * q) * ld] : 0.0f;
            }
        }
    }

    __device__ void store(float (*s)[LD], int tid) const  // s[p][r], the tile as the loop reads it
    {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            if (P_FAST) s[tid % BK][tid / BK + 32 * q] = v[q];
            else s[tid / BM + 2 * q][tid % BM] = v[q];
        }
    }
};

// C[i][j] = sum over p in [p_begin, p_end) of A(i,p)·B(p,j) for this block's 128×128 tile of the
// MI×NJ output C (leading dimension ldc). A_P_FAST / B_P_FAST: which index of A (i, p) and of
// B (j, p) is contiguous; lda / ldb are their leading dimensions.
template <bool A_P_FAST, bool B_P_FAST>
__device__ void gemm_tile(const float* __restrict__ A, int lda, const float* __restrict__ B, int ldb,
                          float* __restrict__ C, int ldc, int MI, int NJ, int p_begin, int p_end)
{
    __shared__ __align__(16) float As[2][BK][LD];  // As[p][i]
    __shared__ __align__(16) float Bs[2][BK][LD];  // Bs[p][j]

    const int tid = threadIdx.x;
    const int tx = tid % 16;  // this thread's columns: tx*4 .. tx*4+3 and 64 + tx*4 .. +3
    const int ty = tid / 16;  // this thread's rows:    ty*4 .. ty*4+3 and 64 + ty*4 .. +3
    const int i0 = blockIdx.y * BM, j0 = blockIdx.x * BN;
    // A's p is the offset from p_begin: the loaders index p relative to the slice.
    const float* a_base = A_P_FAST ? A + p_begin : A + (size_t)p_begin * lda;
    const float* b_base = B_P_FAST ? B + p_begin : B + (size_t)p_begin * ldb;
    TileLoader<A_P_FAST> la(a_base, lda, i0, MI, tid);
    TileLoader<B_P_FAST> lb(b_base, ldb, j0, NJ, tid);
    const int depth = p_end > p_begin ? p_end - p_begin : 0;

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

    const int tiles = (depth + BK - 1) / BK;
    if (tiles > 0) {
        la.load(0, depth);
        lb.load(0, depth);
        la.store(As[0], tid);
        lb.store(Bs[0], tid);
    }
    __syncthreads();

    for (int t = 0; t < tiles; ++t) {
        const int buf = t & 1;
        // Double buffering: the next tile's global loads fly while this one is multiplied.
        if (t + 1 < tiles) {
            la.load((t + 1) * BK, depth);
            lb.load((t + 1) * BK, depth);
        }
#pragma unroll
        for (int k = 0; k < BK; ++k) {
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
        if (t + 1 < tiles) {
            la.store(As[buf ^ 1], tid);
            lb.store(Bs[buf ^ 1], tid);
        }
        // One barrier: the other buffer is complete, and nobody overwrites this one while it is read.
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = i0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (r >= MI) continue;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int c = j0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (c < NJ) C[(size_t)r * ldc + c] = acc[i][j];
        }
    }
}

// dX[m][k] = sum_n dY[m][n]·W[k][n]: i = m, j = k, p = n; both operands have n contiguous.
extern "C" __global__ void __launch_bounds__(THREADS, 2)
grad_input(const float* __restrict__ W, const float* __restrict__ dY, float* __restrict__ dX, int M, int N, int K)
{
    gemm_tile<true, true>(dY, N, W, N, dX, K, M, K, 0, N);
}

// Partial s (= blockIdx.z) of dW[k][n] = sum_m X[m][k]·dY[m][n] over its slice of the tokens:
// i = k, j = n, p = m; both operands have the output index contiguous. Slices are a multiple of
// BK long and cover [0, M); a slice past M (when S does not divide evenly) writes zeros.
extern "C" __global__ void __launch_bounds__(THREADS, 2)
grad_weight(const float* __restrict__ X, const float* __restrict__ dY, float* __restrict__ part,
            int M, int N, int K, int S)
{
    const int chunk = ((M + S - 1) / S + BK - 1) / BK * BK;
    const int p_begin = blockIdx.z * chunk;
    const int p_end = min(M, p_begin + chunk);
    gemm_tile<false, false>(X, K, dY, N, part + (size_t)blockIdx.z * K * N, N, K, N, p_begin, p_end);
}

// dW[e] = sum of the S partials at e, in a fixed order: the same bits on every run.
extern "C" __global__ void sum_partials(const float* __restrict__ part, float* __restrict__ dW, int count, int S)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < count) {
        float s = 0.0f;
        for (int z = 0; z < S; ++z) s += part[(size_t)z * count + e];
        dW[e] = s;
    }
}
