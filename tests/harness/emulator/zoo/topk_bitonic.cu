// Per-row top-k: one block per row sorts the row (padded to a power of two with -inf) descending
// with a shared-memory bitonic network, then writes the first k values and their indices.
#include <math_constants.h>
#define MAXL 1024

extern "C" __global__ void topk(const float* x, float* values, int* indices, int L, int k, int P) {
    __shared__ float key[MAXL];
    __shared__ int idx[MAXL];
    const float* row = x + (size_t)blockIdx.x * L;
    for (int i = threadIdx.x; i < P; i += blockDim.x) {
        key[i] = i < L ? row[i] : -CUDART_INF_F;
        idx[i] = i;
    }
    __syncthreads();
    for (int size = 2; size <= P; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            for (int i = threadIdx.x; i < P; i += blockDim.x) {
                int j = i ^ stride;
                if (j > i) {
                    bool descending = (i & size) == 0;
                    float a = key[i], b = key[j];
                    // ties broken by index so the order is total and indices stay distinct
                    bool a_first = a > b || (a == b && idx[i] < idx[j]);
                    if (a_first != descending) {
                        key[i] = b; key[j] = a;
                        int t = idx[i]; idx[i] = idx[j]; idx[j] = t;
                    }
                }
            }
            __syncthreads();
        }
    }
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
        values[(size_t)blockIdx.x * k + i] = key[i];
        indices[(size_t)blockIdx.x * k + i] = idx[i];
    }
}
