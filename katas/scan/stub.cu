// Inclusive prefix sum: y[i] = x[0] + x[1] + ... + x[i], in int32 arithmetic that wraps on overflow.
// `kata grade` compiles this file with NVRTC. The default launch.py runs three steps:
//   1. scan_tiles: each block scans its own tile of BLOCK elements and records the tile's total;
//   2. the same two kernels, recursively, scan the tile totals (in place);
//   3. add_offsets: each tile adds the sum of all earlier tiles.
#define BLOCK 256

// No __restrict__ on x and y: the plan scans the tile totals in place (x == y).
extern "C" __global__ void scan_tiles(const int* x, int* y, int* tile_sums, int n)
{
    __shared__ int s[BLOCK];
    const int i = blockIdx.x * BLOCK + threadIdx.x;

    // Threads past the end of a partial last tile load 0, so the scan below needs no special case.
    s[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();

    // TODO: inclusive scan of s[] across the block (Hillis-Steele: log2(BLOCK) steps, each reading
    //       s[t - offset]; a __syncthreads() between every read and the write that follows it).
    // TODO: write s[threadIdx.x] to y[i] (only if i < n) and, from the last thread,
    //       s[BLOCK - 1] to tile_sums[blockIdx.x].
    // Hint on overflow: signed overflow is undefined in C++; unsigned arithmetic wraps by definition.
    (void)tile_sums;
    if (i < n) {
        y[i] = s[threadIdx.x];  // placeholder: copies instead of scanning
    }
}

extern "C" __global__ void add_offsets(int* __restrict__ y, const int* __restrict__ scanned_sums, int n)
{
    // TODO: every tile but the first adds the inclusive sum of all earlier tiles,
    //       scanned_sums[blockIdx.x - 1], to each of its elements (mind i < n).
    (void)y; (void)scanned_sums; (void)n;
}
