// Design: one thread per element of B, 16x16 blocks; writes B along rows (coalesced), reads A down columns (strided).
extern "C" __global__ void transpose(const float* A, float* B, int R, int C)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;  // column of B = row of A
    int c = blockIdx.y * blockDim.y + threadIdx.y;  // row of B = column of A
    if (r < R && c < C) B[(size_t)c * R + r] = A[(size_t)r * C + c];
}
