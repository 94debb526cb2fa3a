// kata-expect: race-raw
// The last 32 steps use the pre-Volta "warp-synchronous" idiom: since Volta, lanes of a warp are not ordered without __syncwarp().
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[1024];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        sum += x[i];
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 32; step >>= 1) {
        if (threadIdx.x < step) {
            s[threadIdx.x] += s[threadIdx.x + step];
        }
        __syncthreads();
    }
    if (threadIdx.x < 32) {
        volatile float* v = s;
        v[threadIdx.x] += v[threadIdx.x + 32];
        v[threadIdx.x] += v[threadIdx.x + 16];
        v[threadIdx.x] += v[threadIdx.x + 8];
        v[threadIdx.x] += v[threadIdx.x + 4];
        v[threadIdx.x] += v[threadIdx.x + 2];
        v[threadIdx.x] += v[threadIdx.x + 1];
    }
    if (threadIdx.x == 0) {
        atomicAdd(out, s[0]);
    }
}
// full file: the classic unrolled last warp over shared memory (volatile, no __syncwarp) only exists in the shared-tree design, not in the solution's shuffles.
