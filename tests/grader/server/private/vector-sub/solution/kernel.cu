// PRIVATE-SOLUTION-7f3a: a grid-stride loop, so a grid sized to the GPU covers any n.
extern "C" __global__ void vector_sub(const float* a, const float* b, float* c, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        c[i] = a[i] - b[i];
    }
}
