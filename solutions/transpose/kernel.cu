// B = A transposed through a padded shared tile: both the reads of A and the writes of B coalesced.
//
// Naively, a warp reading 32 neighbouring columns of one row of A writes one column of B: 32
// stores R floats apart, 32 sectors per request, 8x the bytes of a coalesced store. Here a block
// reads a 32×32 tile of A row by row (coalesced), and writes the tile of B at the transposed
// position row by row (coalesced again), reading the shared tile column-wise in between.
#define TILE 32
#define ROWS 8  // blockDim.y: each thread copies TILE / ROWS = 4 elements, 4 loads in flight

extern "C" __global__ void transpose(const float* __restrict__ A, float* __restrict__ B, int R, int C)
{
    // 33 columns, not 32: a column of a [32][32] tile lies in one bank (stride 32 words), so
    // reading it is a 32-way bank conflict; with the padding, element (i, j) sits in bank
    // (33 i + j) % 32 = (i + j) % 32, and a column spans all 32 banks.
    __shared__ float tile[TILE][TILE + 1];

    // A 1-D grid of tiles: gridDim.y stops at 65535, which a tall matrix (R > 2 M) would exceed.
    const int tiles_c = (C + TILE - 1) / TILE;
    const int tr = blockIdx.x / tiles_c;  // this block's tile row and column in A
    const int tc = blockIdx.x - tr * tiles_c;
    const int tx = threadIdx.x, ty = threadIdx.y;

    // Read the tile of A: lanes on neighbouring columns, so a warp reads 128 contiguous bytes.
    int c = tc * TILE + tx;
    for (int j = ty; j < TILE; j += ROWS) {
        const int r = tr * TILE + j;
        if (r < R && c < C) tile[j][tx] = A[(size_t)r * C + c];
    }
    __syncthreads();  // the tile is written by all 8 warps and read by all of them, transposed

    // Write the tile of B at the transposed position: B's rows are A's columns. Lanes now run
    // along B's row (A's rows), so the store is coalesced too; the tile is read column-wise.
    const int r = tr * TILE + tx;  // B's column
    for (int j = ty; j < TILE; j += ROWS) {
        c = tc * TILE + j;  // B's row
        if (c < C && r < R) B[(size_t)c * R + r] = tile[tx][j];
    }
}
