// Y = GELU(X·W + bias), float32, row-major, any M, N, K: the bias and the GELU are the GEMM's
// epilogue, applied to each output while it is still in a register, so the product never makes a
// round trip through global memory (an unfused linear then gelu writes and reads M×N floats twice
// more). GELU is the exact one, 0.5 z (1 + erf(z / sqrt 2)).
// The GEMM is the classic CUDA-core design (the matmul kata's):
//   a 128×128 block tile, BK = 8, 256 threads each owning an 8×8 block of C in registers,
//   A staged transposed so both shared reads are float4, and tiles double-buffered in shared memory.
// Why register blocking: a thread that computes one C element reads 2 shared floats per FMA, and
// shared memory delivers 32 floats per clock per SM against 128 FMAs; an 8×8 block does 64 FMAs
// per 16 floats read (4 FMAs per float), so the FMA units, not shared memory, set the pace.
#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
// +4 floats of padding: the transposed store of A hits 32 different banks, and rows stay 16-byte
// aligned for the float4 reads.
#define A_LD (BM + 4)

// (THREADS, 2): at most 128 registers per thread, so two blocks (16 warps) share an SM and one
// block's barrier stalls hide behind the other's FMAs. ptxas spills 16 bytes to make it fit,
// which costs far less than running one block per SM at the 150 registers it would otherwise take.
extern "C" __global__ void __launch_bounds__(THREADS, 2)
gelu_linear(const float* __restrict__ A, const float* __restrict__ B, const float* __restrict__ bias,
            float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[2][BK][A_LD];  // As[k][m]: the A tile, transposed
    __shared__ __align__(16) float Bs[2][BK][BN];    // Bs[k][n]

    const int tid = threadIdx.x;
    const int tx = tid % 16;  // this thread's columns: tx*4 .. tx*4+3 and 64 + tx*4 .. +3
    const int ty = tid / 16;  // this thread's rows:    ty*4 .. ty*4+3 and 64 + ty*4 .. +3
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // Global -> register staging, 4 elements of each tile per thread. For A, k runs fastest over
    // lanes, so a warp reads 4 rows × 32 contiguous bytes; for B, n runs fastest, so a warp reads
    // 128 contiguous bytes. Everything past the matrix edge loads as 0, which adds nothing.
    // Thread tid loads A rows m0 + tid/8 + 32i at column k0 + tid%8, and B rows k0 + tid/128 + 2i
    // at column n0 + tid%128: the row pointers and bounds are fixed, only k0 moves.
    const int a_row = m0 + tid / BK, a_col = tid % BK;
    const int b_row = tid / BN, b_col = n0 + tid % BN;
    const float* a_ptr = A + (size_t)a_row * K + a_col;
    const float* b_ptr = B + (size_t)b_row * N + b_col;
    float ra[4], rb[4];
    auto load_tiles = [&](int k0) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const bool a_in = a_row + 32 * i < M && k0 + a_col < K;
            ra[i] = a_in ? a_ptr[(size_t)(32 * i) * K + k0] : 0.0f;
            const bool b_in = k0 + b_row + 2 * i < K && b_col < N;
            rb[i] = b_in ? b_ptr[(size_t)(k0 + 2 * i) * N] : 0.0f;
        }
    };
    auto store_tiles = [&](int buf) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            As[buf][a_col][tid / BK + 32 * i] = ra[i];
            Bs[buf][b_row + 2 * i][tid % BN] = rb[i];
        }
    };

    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

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
            // Two float4 reads of A (same address across the 16 tx of a row: a broadcast) and two
            // of B (16 distinct, consecutive float4s) feed 64 FMAs.
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
        // One barrier per tile does both jobs: the other buffer is complete before anyone reads
        // it, and nobody overwrites this buffer (next step) before everyone has finished reading it.
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (m >= M) continue;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int n = n0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + (j - 4));
            if (n < N) {
                const float z = acc[i][j] + bias[n];
                C[(size_t)m * N + n] = 0.5f * z * (1.0f + erff(z * 0.70710678118654752f));
            }
        }
    }
}
