// Design: one warp per row: lanes take consecutive int32 words (8 weights each), shuffle sum.
#include <cuda_fp16.h>
extern "C" __global__ void qgemv(const int* Wq, const __half* scales, const __half* x, float* y, int N, int K)
{
    int n = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (n >= N) return;
    int words = (K + 7) / 8, groups = (K + 127) / 128;
    float sum = 0.0f;
    for (int w = lane; w < words; w += 32) {
        int packed = Wq[(size_t)n * words + w];
        float s = __half2float(scales[(size_t)n * groups + (8 * w) / 128]);
        for (int j = 0; j < 8; j++) {
            int k = 8 * w + j;
            if (k < K) sum += (float)((packed << (28 - 4 * j)) >> 28) * s * __half2float(x[k]);
        }
    }
    for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffff, sum, o);
    if (lane == 0) y[n] = sum;
}
