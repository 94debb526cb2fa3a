// SGEMM ladder 1: naive, uncoalesced. One thread per element of C, threadIdx.x walking rows, so
// the 32 lanes of a warp read 32 different rows of A (32 sectors per request) and write 32 rows
// of C; B's element is the same for the whole warp (a broadcast).
extern "C" __global__ void matmul(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                  int M, int N, int K)
{
    const int row = blockIdx.x * 32 + threadIdx.x;
    const int col = blockIdx.y * 32 + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        }
        C[(size_t)row * N + col] = acc;
    }
}
