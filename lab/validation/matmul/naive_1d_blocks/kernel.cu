// Design: one thread per element of C from a flat 1-D index, 256-thread blocks (a warp covers 32 columns of one row).
extern "C" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K)
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < (long long)M * N) {
        int row = idx / N, col = idx % N;
        float sum = 0.0f;
        for (int k = 0; k < K; k++) sum += A[(size_t)row * K + k] * B[(size_t)k * N + col];
        C[idx] = sum;
    }
}
