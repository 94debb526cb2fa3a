// Design: a single block of 1024 threads strides over the whole array (one SM does all the work).
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        c[i] = a[i] + b[i];
}
