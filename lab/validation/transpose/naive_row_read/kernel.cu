// Design: one thread per element, 16x16 blocks; reads A along rows (coalesced), writes B down columns (strided).
extern "C" __global__ void transpose(const float* A, float* B, int R, int C)
{
    int c = blockIdx.y * blockDim.x + threadIdx.x;  // row blocks on grid.x: R / 16 can pass 65535
    int r = blockIdx.x * blockDim.y + threadIdx.y;
    if (r < R && c < C) B[(size_t)c * R + r] = A[(size_t)r * C + c];
}
