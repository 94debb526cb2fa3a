// Design: 32x32 tile through shared memory without padding (32-way bank conflicts on the column read), 32x32 threads.
#define TILE 32
extern "C" __global__ void transpose(const float* A, float* B, int R, int C)
{
    __shared__ float tile[TILE][TILE];
    int c = blockIdx.x * TILE + threadIdx.x;
    int r = blockIdx.y * TILE + threadIdx.y;
    if (r < R && c < C) tile[threadIdx.y][threadIdx.x] = A[(size_t)r * C + c];
    __syncthreads();
    int br = blockIdx.x * TILE + threadIdx.y;  // row of B
    int bc = blockIdx.y * TILE + threadIdx.x;  // column of B
    if (br < C && bc < R) B[(size_t)br * R + bc] = tile[threadIdx.x][threadIdx.y];
}
