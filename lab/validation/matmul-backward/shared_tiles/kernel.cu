// Design: 16x16 shared-memory tiles for both products (the transposed operand loaded through the tile), one output per thread.
#define T 16
extern "C" __global__ void grad_input(const float* W, const float* dY, float* dX, int M, int N, int K)
{
    __shared__ float a[T][T], b[T][T + 1];
    int m = blockIdx.y * T + threadIdx.y, k = blockIdx.x * T + threadIdx.x;
    float s = 0.0f;
    for (int n0 = 0; n0 < N; n0 += T) {
        a[threadIdx.y][threadIdx.x] = (m < M && n0 + threadIdx.x < N) ? dY[(size_t)m * N + n0 + threadIdx.x] : 0.0f;
        int wk = blockIdx.x * T + threadIdx.y;  // W row for this tile, read along n
        b[threadIdx.y][threadIdx.x] = (wk < K && n0 + threadIdx.x < N) ? W[(size_t)wk * N + n0 + threadIdx.x] : 0.0f;
        __syncthreads();
        for (int j = 0; j < T; j++) s += a[threadIdx.y][j] * b[threadIdx.x][j];
        __syncthreads();
    }
    if (m < M && k < K) dX[(size_t)m * K + k] = s;
}
extern "C" __global__ void grad_weight(const float* X, const float* dY, float* dW, int M, int N, int K)
{
    __shared__ float a[T][T + 1], b[T][T];
    int k = blockIdx.y * T + threadIdx.y, n = blockIdx.x * T + threadIdx.x;
    float s = 0.0f;
    for (int m0 = 0; m0 < M; m0 += T) {
        int xk = blockIdx.y * T + threadIdx.x;  // X column, read along k
        a[threadIdx.y][threadIdx.x] = (m0 + threadIdx.y < M && xk < K) ? X[(size_t)(m0 + threadIdx.y) * K + xk] : 0.0f;
        b[threadIdx.y][threadIdx.x] = (m0 + threadIdx.y < M && n < N) ? dY[(size_t)(m0 + threadIdx.y) * N + n] : 0.0f;
        __syncthreads();
        for (int j = 0; j < T; j++) s += a[j][threadIdx.y] * b[j][threadIdx.x];
        __syncthreads();
    }
    if (k < K && n < N) dW[(size_t)k * N + n] = s;
}
