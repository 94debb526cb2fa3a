// Design: 32x32 tile through shared memory padded to 33 columns (no bank conflicts), 32x8 threads, 4 rows each.
#define TILE 32
extern "C" __global__ void transpose(const float* A, float* B, int R, int C)
{
    __shared__ float tile[TILE][TILE + 1];
    int c = blockIdx.x * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        int r = blockIdx.y * TILE + j;
        if (r < R && c < C) tile[j][threadIdx.x] = A[(size_t)r * C + c];
    }
    __syncthreads();
    int bc = blockIdx.y * TILE + threadIdx.x;
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        int br = blockIdx.x * TILE + j;
        if (br < C && bc < R) B[(size_t)br * R + bc] = tile[threadIdx.x][j];
    }
}
