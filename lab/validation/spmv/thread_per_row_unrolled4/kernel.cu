// Design: one thread per row (64-thread blocks), the row's loop unrolled by four into four partial sums.
extern "C" __global__ void spmv(const int* row_ptr, const int* col_idx, const float* vals, const float* x, float* y, int m)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    int start = row_ptr[row], end = row_ptr[row + 1];
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    int j = start;
    for (; j + 3 < end; j += 4) {
        s0 += vals[j] * x[col_idx[j]];
        s1 += vals[j + 1] * x[col_idx[j + 1]];
        s2 += vals[j + 2] * x[col_idx[j + 2]];
        s3 += vals[j + 3] * x[col_idx[j + 3]];
    }
    for (; j < end; j++) s0 += vals[j] * x[col_idx[j]];
    y[row] = (s0 + s1) + (s2 + s3);
}
