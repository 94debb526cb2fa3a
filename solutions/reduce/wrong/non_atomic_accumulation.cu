// kata-expect: wrong-answer
// Blocks add into out[0] with a plain read-modify-write, so concurrent blocks overwrite each other's sums.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[1024];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        sum += x[i];
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (threadIdx.x < step) {
            s[threadIdx.x] += s[threadIdx.x + step];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] += s[0];
    }
}
// full file: the one-element-per-thread shared tree is the setting where a plain += of block sums is tempting; the solution has a different structure.
