// B = A transposed: A is R×C, B is C×R, both row-major. `kata grade` compiles this file with NVRTC.
// The default launch plan gives each 32×32 tile of A one block of 32×8 threads: blockIdx.x picks
// the tile's columns, blockIdx.y its rows, and each thread covers 4 rows of the tile.
#define TILE 32

extern "C" __global__ void transpose(const float* __restrict__ A, float* __restrict__ B, int R, int C)
{
    const int c = blockIdx.x * TILE + threadIdx.x;  // this thread's column of A
    for (int j = threadIdx.y; j < TILE; j += blockDim.y) {
        const int r = blockIdx.y * TILE + j;  // and its rows: j = threadIdx.y, + 8, + 16, + 24
        // TODO: threads past the last row or column must not touch memory.
        // TODO: write B[c][r] = A[r][c] (B has R columns). For speed, stage the tile in shared
        //       memory so that both the reads of A and the writes of B are coalesced.
        (void)A; (void)B; (void)R; (void)C; (void)c; (void)r;
    }
}
