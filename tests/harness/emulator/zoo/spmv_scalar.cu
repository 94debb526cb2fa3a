// CSR SpMV, one thread per row.
extern "C" __global__ void spmv(int m, const int* row_ptr, const int* col, const float* val,
                                const float* x, float* y) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float dot = 0.0f;
        for (int j = row_ptr[row]; j < row_ptr[row + 1]; ++j)
            dot += val[j] * x[col[j]];
        y[row] = dot;
    }
}
