// Warp-shuffle reduction: shuffles inside each warp, one shared slot per warp, grid-stride loads.
__inline__ __device__ float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

extern "C" __global__ void reduce(const float* x, float* out, int n) {
    __shared__ float warp_sums[32];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        sum += x[i];
    int lane = threadIdx.x % warpSize;
    int warp = threadIdx.x / warpSize;
    sum = warp_sum(sum);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        int nwarps = (blockDim.x + warpSize - 1) / warpSize;
        sum = lane < nwarps ? warp_sums[lane] : 0.0f;
        sum = warp_sum(sum);
        if (lane == 0) atomicAdd(out, sum);
    }
}
