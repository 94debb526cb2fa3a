// Design: one thread per non-zero; a binary search of row_ptr finds its row, then atomicAdd into y (zeroed first).
extern "C" __global__ void zero(float* y, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) y[i] = 0.0f;
}
extern "C" __global__ void spmv_nnz(const int* row_ptr, const int* col_idx, const float* vals, const float* x, float* y,
                                    int m, int nnz)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nnz) return;
    int lo = 0, hi = m - 1;  // the last row r with row_ptr[r] <= j
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (row_ptr[mid] <= j) lo = mid; else hi = mid - 1;
    }
    atomicAdd(&y[lo], vals[j] * x[col_idx[j]]);
}
