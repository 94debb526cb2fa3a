// SGEMM ladder 4: 1-D register tiling. A 64x64 block tile, BK = 8, 512 threads; each thread
// computes a column of TM = 8 outputs, so one shared load of B serves 8 FMAs.
#define BM 64
#define BN 64
#define BK 8
#define TM 8

extern "C" __global__ void __launch_bounds__(512) matmul(const float* __restrict__ A, const float* __restrict__ B,
                                                         float* __restrict__ C, int M, int N, int K)
{
    __shared__ float As[BK][BM];  // transposed: As[k][m]
    __shared__ float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tcol = t % BN, trow = t / BN;  // this thread's column and its group of TM rows
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int a_r = t / BK, a_c = t % BK;  // 64 x 8 tile of A, one element per thread
    const int b_r = t / BN, b_c = t % BN;  // 8 x 64 tile of B
    float acc[TM] = {0.0f};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int ar = row0 + a_r, ac = k0 + a_c;
        As[a_c][a_r] = (ar < M && ac < K) ? A[(size_t)ar * K + ac] : 0.0f;
        const int br = k0 + b_r, bc = col0 + b_c;
        Bs[b_r][b_c] = (br < K && bc < N) ? B[(size_t)br * N + bc] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k][tcol];
#pragma unroll
            for (int m = 0; m < TM; ++m) {
                acc[m] += As[k][trow * TM + m] * b;
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int r = row0 + trow * TM + m, c = col0 + tcol;
        if (r < M && c < N) {
            C[(size_t)r * N + c] = acc[m];
        }
    }
}
