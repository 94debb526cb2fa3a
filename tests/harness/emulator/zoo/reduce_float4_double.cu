// Vector loads (float4) in a grid-stride loop, accumulated in double, double atomicAdd.
extern "C" __global__ void reduce(const float* x, double* out, int n) {
    __shared__ double s[128];
    double acc = 0.0;
    int n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 v = x4[i];
        acc += (double)v.x + (double)v.y + (double)v.z + (double)v.w;
    }
    int tail = n4 * 4 + blockIdx.x * blockDim.x + threadIdx.x;
    if (tail < n) acc += x[tail];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) s[threadIdx.x] += s[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, s[0]);
}
