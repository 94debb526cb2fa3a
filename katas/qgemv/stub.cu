// y = W·x for decode. W is N×K signed int4: row n is ceil(K/8) int32 words, nibble j (bits 4j..4j+3)
// of word w holding W[n][8w + j]. scales is N × ceil(K/128) fp16: weight = nibble * scales[n][k / 128].
// x is fp16 (K values), y float32 (N values). `kata grade` compiles this with NVRTC.
// The default launch plan gives one thread per row.
#include <cuda_fp16.h>

extern "C" __global__ void qgemv(const int* __restrict__ Wq, const __half* __restrict__ scales,
                                 const __half* __restrict__ x, float* __restrict__ y, int N, int K)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;

    // TODO: threads past the last row must not touch memory (the grid is rounded up).

    // TODO: for each k < K: take nibble k % 8 of word k / 8 of this row, as a SIGNED value (-8..7),
    //       multiply by the row's scale for group k / 128 and by x[k] (__half2float), sum in a float.

    // TODO: write the sum to y[row]; then make it fast (see `kata hint`).
    (void)Wq; (void)scales; (void)x; (void)y; (void)row; (void)N; (void)K;
}
