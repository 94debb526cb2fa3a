// SGEMM ladder 5: 2-D register tiling. A 128x128 block tile, BK = 8, 256 threads, each computing
// an 8x8 block of C: per k step it reads 8 values of A and 8 of B from shared memory for 64 FMAs.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) matmul(const float* __restrict__ A, const float* __restrict__ B,
                                                         float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[BK][BM];  // transposed
    __shared__ float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tr = t / (BN / TN), tc = t % (BN / TN);  // 16 x 16 threads
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[TM][TN] = {{0.0f}};
    float a[TM], b[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int e = t; e < BM * BK; e += 256) {  // 4 elements of each tile per thread
            const int r = e / BK, c = e % BK;
            const int ar = row0 + r, ac = k0 + c;
            As[c][r] = (ar < M && ac < K) ? A[(size_t)ar * K + ac] : 0.0f;
            const int br = k0 + e / BN, bc = col0 + e % BN;
            Bs[e / BN][e % BN] = (br < K && bc < N) ? B[(size_t)br * N + bc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int m = 0; m < TM; ++m) a[m] = As[k][tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; ++n) b[n] = Bs[k][tc * TN + n];
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) {
            const int r = row0 + tr * TM + m, c = col0 + tc * TN + n;
            if (r < M && c < N) C[(size_t)r * N + c] = acc[m][n];
        }
}
