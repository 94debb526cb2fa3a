// Design: one 1024-thread block per row; the max and the sum combined with atomics on one shared word (atomicMax on the float's ordered int bits, atomicAdd).
__device__ int ordered(float f) { int i = __float_as_int(f); return i >= 0 ? i : i ^ 0x7fffffff; }
__device__ float unordered(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff); }
extern "C" __global__ void softmax(const float* x, float* y, int R, int C)
{
    __shared__ int smax;
    __shared__ float ssum;
    const float* row = x + (size_t)blockIdx.x * C;
    float* out = y + (size_t)blockIdx.x * C;
    if (threadIdx.x == 0) { smax = ordered(-1e30f); ssum = 0.0f; }
    __syncthreads();
    float mx = -1e30f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) mx = fmaxf(mx, row[c]);
    atomicMax(&smax, ordered(mx));
    __syncthreads();
    mx = unordered(smax);
    float sum = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) sum += expf(row[c] - mx);
    atomicAdd(&ssum, sum);
    __syncthreads();
    sum = ssum;
    for (int c = threadIdx.x; c < C; c += blockDim.x) out[c] = expf(row[c] - mx) / sum;
}
