// Design: scalar CSR: one thread per row loops over its non-zeros (a power-law row is one thread's long loop).
extern "C" __global__ void spmv(const int* row_ptr, const int* col_idx, const float* vals, const float* x, float* y, int m)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float sum = 0.0f;
        for (int j = row_ptr[row]; j < row_ptr[row + 1]; j++) sum += vals[j] * x[col_idx[j]];
        y[row] = sum;
    }
}
