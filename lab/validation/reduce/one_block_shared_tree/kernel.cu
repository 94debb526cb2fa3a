// Design: a single block of 1024 threads: each thread sums a strided share, then a shared-memory
// tree (sequential addressing) and thread 0 writes the result. No atomics, one SM.
extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    __shared__ float s[1024];
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) sum += x[i];
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = s[0];
}
