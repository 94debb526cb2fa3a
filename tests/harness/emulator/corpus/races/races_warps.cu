// Results that depend on the order of a block's warps, and a global write after another block's
// read. Each wrong kernel is followed by its right twin.

// Row sums: every warp adds its partial to a shared total with an atomic; the highest warp then
// reads the total, taking itself to be the last to add. No barrier makes it last: a GPU may run
// it first (the atomics never race, so no race check names it; only another warp order shows it).
extern "C" __global__ void row_sum_last_warp(const float* x, float* out, int cols) {
    __shared__ float total;
    const float* row = x + blockIdx.x * cols;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) atomicAdd(&total, s);
    if (lane == 0 && warp == blockDim.x / 32 - 1)
        out[blockIdx.x] = atomicAdd(&total, 0.0f);  // MARK warp-last
}

extern "C" __global__ void row_sum_barrier(const float* x, float* out, int cols) {
    __shared__ float total;
    const float* row = x + blockIdx.x * cols;
    if (threadIdx.x == 0) total = 0.0f;
    __syncthreads();
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&total, s);
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// In-place smoothing x[i] = (x[i] + x[i+1]) / 2: the barrier orders one block's threads, but the
// last thread of a block reads x[i+1], which the next block overwrites whenever it runs.
extern "C" __global__ void smooth_in_place(float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float mine = 0.0f, right = 0.0f;
    if (i < n) {
        mine = x[i];
        right = i + 1 < n ? x[i + 1] : mine;  // MARK smooth-read
    }
    __syncthreads();  // orders this block's threads only
    if (i < n) x[i] = 0.5f * (mine + right);  // MARK smooth-write
}

extern "C" __global__ void smooth_out_of_place(float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 0.5f * (x[i] + (i + 1 < n ? x[i + 1] : x[i]));
}

// Shift left by one inside a block, in place: x[i] = x[i+1]. With no barrier between the read and
// the write, the first thread of a warp may overwrite its word before the previous warp's last
// thread has read it.
extern "C" __global__ void shift_in_place(float* x, int n) {
    int i = threadIdx.x;
    float v = i + 1 < n ? x[i + 1] : 0.0f;  // MARK shift-read
    if (i < n) x[i] = v;  // MARK shift-write
}

extern "C" __global__ void shift_in_place_synced(float* x, int n) {
    int i = threadIdx.x;
    float v = i + 1 < n ? x[i + 1] : 0.0f;
    __syncthreads();
    if (i < n) x[i] = v;
}
