// Design: one thread per row (the stub's plan): each thread unpacks its row's words nibble by nibble (a warp reads 32 rows: uncoalesced).
#include <cuda_fp16.h>
extern "C" __global__ void qgemv(const int* Wq, const __half* scales, const __half* x, float* y, int N, int K)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N) return;
    int words = (K + 7) / 8, groups = (K + 127) / 128;
    float sum = 0.0f;
    for (int w = 0; w < words; w++) {
        int packed = Wq[(size_t)n * words + w];
        for (int j = 0; j < 8; j++) {
            int k = 8 * w + j;
            if (k >= K) break;
            int q = (packed << (28 - 4 * j)) >> 28;  // sign-extended nibble j
            sum += (float)q * __half2float(scales[(size_t)n * groups + k / 128]) * __half2float(x[k]);
        }
    }
    y[n] = sum;
}
