// Reduction ladder 4: first add during load. Each block covers 2 x 256 elements and every thread
// adds two of them while loading, so no thread idles in the first step and half as many blocks
// (and atomics) remain.
extern "C" __global__ void reduce(const float* __restrict__ x, float* __restrict__ out, int n)
{
    __shared__ float s[256];
    const unsigned t = threadIdx.x;
    const int i = blockIdx.x * (2 * blockDim.x) + t;
    float v = i < n ? x[i] : 0.0f;
    if (i + blockDim.x < n) {
        v += x[i + blockDim.x];
    }
    s[t] = v;
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
