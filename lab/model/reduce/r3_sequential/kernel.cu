// Reduction ladder 3: sequential addressing. At stride s threads 0..s-1 add s[t + s]: consecutive
// lanes, consecutive words, no bank conflicts; half the threads idle from the first step on.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) {
            s[t] += s[t + stride];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(out, s[0]);
    }
}
