// Design: one thread per output element for dX = dY W^T and dW = X^T dY, 16x16 blocks, everything from global memory.
extern "C" __global__ void grad_input(const float* W, const float* dY, float* dX, int M, int N, int K)
{
    int m = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (m >= M || k >= K) return;
    float s = 0.0f;
    for (int n = 0; n < N; n++) s += dY[(size_t)m * N + n] * W[(size_t)k * N + n];
    dX[(size_t)m * K + k] = s;
}
extern "C" __global__ void grad_weight(const float* X, const float* dY, float* dW, int M, int N, int K)
{
    int k = blockIdx.y * blockDim.y + threadIdx.y;
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= K || n >= N) return;
    float s = 0.0f;
    for (int m = 0; m < M; m++) s += X[(size_t)m * K + k] * dY[(size_t)m * N + n];
    dW[(size_t)k * N + n] = s;
}
