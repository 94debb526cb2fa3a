// SGEMM ladder 6: vectorised. The 2-D register-tiled kernel with float4 global loads (A's tile
// stored transposed as it arrives), float4 shared-memory reads of both tiles and float4 stores
// of C: a quarter of the load/store instructions. Needs K and N multiples of 4 (the plan falls
// back to the scalar 2-D kernel below otherwise).
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

extern "C" __global__ void __launch_bounds__(256) matmul_vec(const float* __restrict__ A, const float* __restrict__ B,
                                                             float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(16) float As[BK][BM];
    __shared__ __align__(16) float Bs[BK][BN];
    const int t = threadIdx.x;
    const int tr = t / (BN / TN), tc = t % (BN / TN);
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int a_r = t / 2, a_c = (t % 2) * 4;  // 128 x 8 tile of A: one float4 per thread
    const int b_r = t / 32, b_c = (t % 32) * 4;  // 8 x 128 tile of B: one float4 per thread
    float acc[TM][TN] = {{0.0f}};
    float a[TM], b[TN];
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
            const float4 a0 = *reinterpret_cast<const float4*>(&As[k][tr * TM]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[k][tr * TM + 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tc * TN]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][tc * TN + 4]);
            a[0] = a0.x; a[1] = a0.y; a[2] = a0.z; a[3] = a0.w; a[4] = a1.x; a[5] = a1.y; a[6] = a1.z; a[7] = a1.w;
            b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w; b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
        }
        __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int r = row0 + tr * TM + m, c = col0 + tc * TN;
        if (r < M && c < N) {
            *reinterpret_cast<float4*>(&C[(size_t)r * N + c]) = make_float4(acc[m][0], acc[m][1], acc[m][2], acc[m][3]);
            *reinterpret_cast<float4*>(&C[(size_t)r * N + c + 4]) = make_float4(acc[m][4], acc[m][5], acc[m][6], acc[m][7]);
        }
    }
}
