// Design: each thread adds its own contiguous chunk of 64 elements (neighbouring threads are 256 B
// apart: uncoalesced).
#define CHUNK 64
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n)
{
    long long start = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * CHUNK;
    for (int j = 0; j < CHUNK; j++) {
        long long i = start + j;
        if (i < n) c[i] = a[i] + b[i];
    }
}
