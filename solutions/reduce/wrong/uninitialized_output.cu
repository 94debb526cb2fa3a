// kata-expect: wrong-answer
// The kernel is right but its launch plan never zeroes out, so the blocks add into the NaN the grader left there.
// Sum reduction at memory speed: float4 loads, a grid-stride loop, warp shuffles, one atomic per block.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    float sum = 0.0f;
    const int stride = gridDim.x * blockDim.x;
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;

    // float4 loads: one 16-byte load per thread gives a warp 512 contiguous bytes per instruction,
    // a quarter of the load instructions of scalar code. Device allocations are 256-byte aligned,
    // so x reinterpreted as float4 is aligned.
    const int n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    // Grid-stride: the grid is sized to the GPU, not to n, so each thread keeps a long private sum
    // and the block-level work (shuffles, barrier, atomic) is paid once per block, not per element.
    for (int i = tid; i < n4; i += stride) {
        const float4 v = x4[i];
        sum += (v.x + v.y) + (v.z + v.w);
    }
    // The n % 4 elements float4 cannot reach.
    for (int i = 4 * n4 + tid; i < n; i += stride) {
        sum += x[i];
    }

    // Warp shuffles: 5 steps combine 32 lanes in registers, no shared memory and no barrier.
    for (int offset = 16; offset > 0; offset >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }

    // One slot per warp; the barrier publishes them before warp 0 reads them.
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) {
        warp_sums[warp] = sum;
    }
    __syncthreads();

    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        sum = lane < warps ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
        // One atomic per block: ~1000 atomics in total instead of n.
        if (lane == 0) {
            atomicAdd(out, sum);
        }
    }
}
