// Shared-memory tree reduction, sequential addressing (Harris, "Optimizing Parallel Reduction", #3).
#define BLOCK 256

extern "C" __global__ void reduce(const float* x, float* out, int n) {
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, s[0]);
}
