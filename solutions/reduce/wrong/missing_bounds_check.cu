// kata-expect: out-of-bounds
// Each thread loads four elements per tile without checking them against n, so the last tile reads past the end of x.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    float sum = 0.0f;
    const int tile = blockDim.x * 4;
    for (int base = blockIdx.x * tile; base < n; base += gridDim.x * tile) {
        for (int k = 0; k < 4; ++k) {
            sum += x[base + k * blockDim.x + threadIdx.x];
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_sums[warp] = sum;
    }
    __syncthreads();
    if (warp == 0) {
        sum = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
        if (lane == 0) {
            atomicAdd(out, sum);
        }
    }
}
// full file: the bug lives in the grid-stride shared-memory tree the solution does not use (it reduces with float4 loads and shuffles).
