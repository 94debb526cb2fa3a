// CSR SpMV, one warp per row: lanes stride the row, shuffles reduce (skewed rows stay balanced).
extern "C" __global__ void spmv(int m, const int* __restrict__ row_ptr, const int* __restrict__ col,
                                const float* __restrict__ val, const float* __restrict__ x, float* y) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (warp >= m) return;
    float sum = 0.0f;
    for (int j = row_ptr[warp] + lane; j < row_ptr[warp + 1]; j += 32)
        sum += val[j] * __ldg(&x[col[j]]);
    for (int off = 16; off > 0; off >>= 1)
        sum += __shfl_xor_sync(0xffffffff, sum, off);
    if (lane == 0) y[warp] = sum;
}
