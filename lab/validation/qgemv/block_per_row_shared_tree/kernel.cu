// Design: one 128-thread block per row, each thread one weight at a time (a word re-read for each of its nibbles), shared-memory tree sum.
#include <cuda_fp16.h>
extern "C" __global__ void qgemv(const int* Wq, const __half* scales, const __half* x, float* y, int N, int K)
{
    __shared__ float s[128];
    int n = blockIdx.x, words = (K + 7) / 8, groups = (K + 127) / 128;
    float sum = 0.0f;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        int packed = Wq[(size_t)n * words + k / 8];
        int j = k % 8;
        sum += (float)((packed << (28 - 4 * j)) >> 28) * __half2float(scales[(size_t)n * groups + k / 128]) * __half2float(x[k]);
    }
    s[threadIdx.x] = sum;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st /= 2) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[n] = s[0];
}
