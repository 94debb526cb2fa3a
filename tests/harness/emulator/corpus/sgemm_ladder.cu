// An SGEMM ladder, C = alpha * A @ B + beta * C, row-major A (M x K), B (K x N), C (M x N):
// naive, coalesced, shared-memory tiles, 1-D and 2-D register blocking, float4 loads with a
// transposed A tile. Tile sizes are template parameters, instantiated explicitly.
#include "common.cuh"

__global__ void sgemm_naive(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < M && y < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i) tmp += A[x * K + i] * B[i * N + y];
        C[x * N + y] = alpha * tmp + beta * C[x * N + y];
    }
}

template <const unsigned BLOCKSIZE>
__global__ void sgemm_global_mem_coalesce(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int cRow = blockIdx.x * BLOCKSIZE + (threadIdx.x / BLOCKSIZE);
    const int cCol = blockIdx.y * BLOCKSIZE + (threadIdx.x % BLOCKSIZE);
    if (cRow < M && cCol < N) {
        float tmp = 0.0f;
        for (int i = 0; i < K; ++i) tmp += A[cRow * K + i] * B[i * N + cCol];
        C[cRow * N + cCol] = alpha * tmp + beta * C[cRow * N + cCol];
    }
}
template __global__ void sgemm_global_mem_coalesce<8>(int, int, int, float, const float*, const float*, float, float*);

template <const int BLOCKSIZE>
__global__ void sgemm_shared_mem_block(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    __shared__ float As[BLOCKSIZE * BLOCKSIZE], Bs[BLOCKSIZE * BLOCKSIZE];
    const int tr = threadIdx.x / BLOCKSIZE, tc = threadIdx.x % BLOCKSIZE;
    const int row = blockIdx.y * BLOCKSIZE + tr, col = blockIdx.x * BLOCKSIZE + tc;
    float tmp = 0.0f;
    for (int bk = 0; bk < K; bk += BLOCKSIZE) {
        As[tr * BLOCKSIZE + tc] = (row < M && bk + tc < K) ? A[row * K + bk + tc] : 0.0f;
        Bs[tr * BLOCKSIZE + tc] = (bk + tr < K && col < N) ? B[(bk + tr) * N + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < BLOCKSIZE; ++i) tmp += As[tr * BLOCKSIZE + i] * Bs[i * BLOCKSIZE + tc];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = alpha * tmp + beta * C[row * N + col];
}
template __global__ void sgemm_shared_mem_block<16>(int, int, int, float, const float*, const float*, float, float*);

// 1-D blocktiling: each thread computes TM rows of one column (M, N multiples of BM, BN; K of BK)
template <const int BM, const int BN, const int BK, const int TM>
__global__ void sgemm1DBlocktiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int cRow = blockIdx.y, cCol = blockIdx.x;
    const int threadCol = threadIdx.x % BN, threadRow = threadIdx.x / BN;
    __shared__ float As[BM * BK], Bs[BK * BN];
    A += cRow * BM * K; B += cCol * BN; C += cRow * BM * N + cCol * BN;
    const int innerColA = threadIdx.x % BK, innerRowA = threadIdx.x / BK;
    const int innerColB = threadIdx.x % BN, innerRowB = threadIdx.x / BN;
    float threadResults[TM] = {0.0f};
    for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
        As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];
        Bs[innerRowB * BN + innerColB] = B[innerRowB * N + innerColB];
        __syncthreads();
        A += BK; B += BK * N;
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
            float tmpB = Bs[dotIdx * BN + threadCol];
            for (int resIdx = 0; resIdx < TM; ++resIdx) threadResults[resIdx] += As[(threadRow * TM + resIdx) * BK + dotIdx] * tmpB;
        }
        __syncthreads();
    }
    for (int resIdx = 0; resIdx < TM; ++resIdx)
        C[(threadRow * TM + resIdx) * N + threadCol] = alpha * threadResults[resIdx] + beta * C[(threadRow * TM + resIdx) * N + threadCol];
}
template __global__ void sgemm1DBlocktiling<32, 32, 8, 4>(int, int, int, float, const float*, const float*, float, float*);

// 2-D blocktiling: a TM x TN register tile per thread, strided loads of the A and B tiles
template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN), 1)
sgemm2DBlocktiling(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    const int cRow = blockIdx.y, cCol = blockIdx.x;
    const int numThreads = (BM * BN) / (TM * TN);
    const int threadCol = threadIdx.x % (BN / TN), threadRow = threadIdx.x / (BN / TN);
    __shared__ float As[BM * BK], Bs[BK * BN];
    A += cRow * BM * K; B += cCol * BN; C += cRow * BM * N + cCol * BN;
    const int innerRowA = threadIdx.x / BK, innerColA = threadIdx.x % BK, strideA = numThreads / BK;
    const int innerRowB = threadIdx.x / BN, innerColB = threadIdx.x % BN, strideB = numThreads / BN;
    float threadResults[TM * TN] = {0.0f}, regM[TM] = {0.0f}, regN[TN] = {0.0f};
    for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
        for (int off = 0; off < BM; off += strideA) As[(innerRowA + off) * BK + innerColA] = A[(innerRowA + off) * K + innerColA];
        for (int off = 0; off < BK; off += strideB) Bs[(innerRowB + off) * BN + innerColB] = B[(innerRowB + off) * N + innerColB];
        __syncthreads();
        A += BK; B += BK * N;
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
            for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
            for (int rm = 0; rm < TM; ++rm)
                for (int rn = 0; rn < TN; ++rn) threadResults[rm * TN + rn] += regM[rm] * regN[rn];
        }
        __syncthreads();
    }
    for (int rm = 0; rm < TM; ++rm)
        for (int rn = 0; rn < TN; ++rn) {
            float* c = &C[(threadRow * TM + rm) * N + threadCol * TN + rn];
            *c = alpha * threadResults[rm * TN + rn] + beta * *c;
        }
}
template __global__ void sgemm2DBlocktiling<32, 32, 8, 4, 4>(int, int, int, float, const float*, const float*, float, float*);

// vectorised: float4 global loads, A tile stored transposed so the inner loop reads it contiguously
template <const int BM, const int BN, const int BK, const int TM, const int TN>
__global__ void sgemmVectorize(int M, int N, int K, float alpha, float* A, float* B, float beta, float* C) {
    const int cRow = blockIdx.y, cCol = blockIdx.x;
    const int threadCol = threadIdx.x % (BN / TN), threadRow = threadIdx.x / (BN / TN);
    __shared__ float As[BM * BK], Bs[BK * BN];
    A += cRow * BM * K; B += cCol * BN; C += cRow * BM * N + cCol * BN;
    const int innerRowA = threadIdx.x / (BK / 4), innerColA = threadIdx.x % (BK / 4);
    const int innerRowB = threadIdx.x / (BN / 4), innerColB = threadIdx.x % (BN / 4);
    float threadResults[TM * TN] = {0.0f}, regM[TM] = {0.0f}, regN[TN] = {0.0f};
    for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
        float4 tmp = reinterpret_cast<float4*>(&A[innerRowA * K + innerColA * 4])[0];
        As[(innerColA * 4 + 0) * BM + innerRowA] = tmp.x;
        As[(innerColA * 4 + 1) * BM + innerRowA] = tmp.y;
        As[(innerColA * 4 + 2) * BM + innerRowA] = tmp.z;
        As[(innerColA * 4 + 3) * BM + innerRowA] = tmp.w;
        reinterpret_cast<float4*>(&Bs[innerRowB * BN + innerColB * 4])[0] = reinterpret_cast<float4*>(&B[innerRowB * N + innerColB * 4])[0];
        __syncthreads();
        A += BK; B += BK * N;
        for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
            for (int i = 0; i < TM; ++i) regM[i] = As[dotIdx * BM + threadRow * TM + i];
            for (int i = 0; i < TN; ++i) regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
            for (int rm = 0; rm < TM; ++rm)
                for (int rn = 0; rn < TN; ++rn) threadResults[rm * TN + rn] += regM[rm] * regN[rn];
        }
        __syncthreads();
    }
    for (int rm = 0; rm < TM; ++rm)
        for (int rn = 0; rn < TN; rn += 4) {
            float4 c = reinterpret_cast<float4*>(&C[(threadRow * TM + rm) * N + threadCol * TN + rn])[0];
            c.x = alpha * threadResults[rm * TN + rn] + beta * c.x;
            c.y = alpha * threadResults[rm * TN + rn + 1] + beta * c.y;
            c.z = alpha * threadResults[rm * TN + rn + 2] + beta * c.z;
            c.w = alpha * threadResults[rm * TN + rn + 3] + beta * c.w;
            reinterpret_cast<float4*>(&C[(threadRow * TM + rm) * N + threadCol * TN + rn])[0] = c;
        }
}
template __global__ void sgemmVectorize<32, 32, 8, 4, 4>(int, int, int, float, float*, float*, float, float*);
