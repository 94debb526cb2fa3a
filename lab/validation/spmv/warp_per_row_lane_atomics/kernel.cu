// Design: one warp per row (four rows per 128-thread block); each lane sums a strided share of the row and adds it to y[row] with a global atomic (no shuffles).
extern "C" __global__ void spmv(const int* row_ptr, const int* col_idx, const float* vals, const float* x, float* y, int m)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= m) return;
    float sum = 0.0f;
    for (int j = row_ptr[row] + lane; j < row_ptr[row + 1]; j += 32) sum += vals[j] * x[col_idx[j]];
    atomicAdd(&y[row], sum);
}
