// Design: grid-stride loop with 32-thread blocks and a grid of one block per SM (too few warps in
// flight to cover DRAM latency).
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}
