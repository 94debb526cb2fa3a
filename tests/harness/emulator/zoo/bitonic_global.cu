// Global bitonic sort of a power-of-two buffer: the host loops over (size, stride) and launches
// one compare-exchange step per pass; a pad kernel fills the tail with +inf for ragged n.
#include <math_constants.h>
__global__ void pad(float* a, int n, int p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n && i < p) a[i] = CUDART_INF_F;
}

__global__ void bitonic_step(float* a, int size, int stride) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned j = i ^ stride;
    if (j > i) {
        bool ascending = (i & size) == 0;
        float x = a[i], y = a[j];
        if ((x > y) == ascending) {
            a[i] = y;
            a[j] = x;
        }
    }
}
