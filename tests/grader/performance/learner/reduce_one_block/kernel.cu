// A learner's single-block reduction: 1024 threads stride over the whole input, then a shared tree.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[1024];
    float v = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = s[0];
}
