// SGEMM ladder 7: warp tiling. The 128x128 block tile is split into eight 64x32 warp tiles; in a
// warp, lanes form a 4x8 grid and each computes two 8x4 sub-tiles, so a warp's shared reads of A
// cover 4 distinct float4 rows (broadcast to 8 lanes each) and of B 8 contiguous float4: fewer
// wavefronts per FMA than the thread-tiled layout. float4 global loads as ladder step 6.
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

extern "C" __global__ void __launch_bounds__(256) matmul_scalar(const float* __restrict__ A, const float* __restrict__ B,
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

extern "C" __global__ void __launch_bounds__(256) matmul_warp(const float* __restrict__ A, const float* __restrict__ B,
                                                              float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x, w = t / 32, l = t % 32;
    const int wm = w / 4, wn = w % 4;  // 2 x 4 warps, 64 x 32 each
    const int lm = l / 8, ln = l % 8;  // 4 x 8 lanes
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int a_r = t / 2, a_c = (t % 2) * 4;
    const int b_r = t / 32, b_c = (t % 32) * 4;
    float acc[2][8][4] = {{{0.0f}}};
    for (int k0 = 0; k0 < K; k0 += BK) {
        float4 va = make_float4(0.f, 0.f, 0.f, 0.f), vb = va;
        if (row0 + a_r < M && k0 + a_c < K) va = *reinterpret_cast<const float4*>(&A[(size_t)(row0 + a_r) * K + k0 + a_c]);
        if (k0 + b_r < K && col0 + b_c < N) vb = *reinterpret_cast<const float4*>(&B[(size_t)(k0 + b_r) * N + col0 + b_c]);
        As[a_c + 0][a_r] = va.x;
        As[a_c + 1][a_r] = va.y;
        As[a_c + 2][a_r] = va.z;
        As[a_c + 3][a_r] = va.w;
        *reinterpret_cast<float4*>(&Bs[b_r][b_c]) = vb;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 b = *reinterpret_cast<const float4*>(&Bs[k][wn * 32 + ln * 4]);
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const float4 a0 = *reinterpret_cast<const float4*>(&As[k][wm * 64 + i * 32 + lm * 8]);
                const float4 a1 = *reinterpret_cast<const float4*>(&As[k][wm * 64 + i * 32 + lm * 8 + 4]);
                const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
                for (int m = 0; m < 8; ++m) {
                    acc[i][m][0] += a[m] * b.x;
                    acc[i][m][1] += a[m] * b.y;
                    acc[i][m][2] += a[m] * b.z;
                    acc[i][m][3] += a[m] * b.w;
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int m = 0; m < 8; ++m) {
            const int r = row0 + wm * 64 + i * 32 + lm * 8 + m, c = col0 + wn * 32 + ln * 4;
            if (r < M && c < N) {
                *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) = make_float4(acc[i][m][0], acc[i][m][1], acc[i][m][2], acc[i][m][3]);
            }
        }
}
