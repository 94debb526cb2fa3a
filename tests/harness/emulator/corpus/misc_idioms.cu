// Idioms met in public kernels: a software grid barrier (counter + generation, spinning with
// __nanosleep), a histogram with warp-aggregated atomics (__match_any_sync), a padded shared-memory
// transpose over 2-D blocks, and a reduction that stores its result the way compiled tile code does
// (every lane of the warp writes the same value to one shared word).
#include "common.cuh"

__device__ void grid_barrier(unsigned int* count, volatile unsigned int* generation) {
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int gen = *generation;
        __threadfence();
        if (atomicAdd(count, 1u) == gridDim.x - 1) {
            *count = 0;
            __threadfence();
            *generation = gen + 1;  // release everybody
        } else {
            while (*generation == gen) __nanosleep(64);
        }
        __threadfence();
    }
    __syncthreads();
}

// every block needs the global mean before it can centre its slice: two phases, one launch
__global__ void center_grid_sync(const float* x, float* y, float* partial, unsigned int* sync, int n) {
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
    v = block_sum(v);
    if (threadIdx.x == 0) partial[blockIdx.x] = v;
    grid_barrier(sync, sync + 1);
    float total = 0.0f;
    for (int b = 0; b < gridDim.x; b++) total += __ldcg(&partial[b]);
    float mean = total / n;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) y[i] = x[i] - mean;
}

__global__ void histogram_warp_aggregated(const int* data, unsigned int* bins, int n, int nbins) {
    extern __shared__ unsigned int local[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int base = blockIdx.x * blockDim.x; base < n; base += gridDim.x * blockDim.x) {
        int i = base + threadIdx.x;
        unsigned int active = __ballot_sync(0xffffffff, i < n);
        if (i < n) {
            int bin = data[i];
            unsigned int peers = __match_any_sync(active, bin);  // lanes with the same bin
            int leader = __ffs(peers) - 1;
            if ((threadIdx.x % 32) == leader) atomicAdd(&local[bin], __popc(peers));
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) if (local[b]) atomicAdd(&bins[b], local[b]);
}

#define TILE_DIM 32
#define BLOCK_ROWS 8
__global__ void transposeNoBankConflicts(float* odata, const float* idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];
    int x = blockIdx.x * TILE_DIM + threadIdx.x, y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

// row max, one warp per row; every lane stores the warp's max into the row's shared slot
__global__ void row_max_broadcast_store(const float* x, float* out, int rows, int cols) {
    __shared__ float slot[8];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32, row = blockIdx.x * 8 + warp;
    float m = -INFINITY;
    if (row < rows)
        for (int c = lane; c < cols; c += 32) m = fmaxf(m, x[row * cols + c]);
    m = warp_max(m);
    slot[warp] = m;  // 32 lanes, one value, one word
    __syncthreads();
    if (threadIdx.x < 8 && blockIdx.x * 8 + threadIdx.x < rows) out[blockIdx.x * 8 + threadIdx.x] = slot[threadIdx.x];
}

// the same transpose on bf16: two neighbouring lanes write the two halves of one shared word
__global__ void transpose_bf16(__nv_bfloat16* odata, const __nv_bfloat16* idata, int width, int height) {
    __shared__ __nv_bfloat16 tile[TILE_DIM][TILE_DIM + 2];
    int x = blockIdx.x * TILE_DIM + threadIdx.x, y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
