// Sparse matrix times vector, y = A x, with A in CSR form: the non-zeros of row r are
// vals[row_ptr[r] .. row_ptr[r+1]) in columns col_idx[...]. `kata grade` compiles this file with NVRTC.
extern "C" __global__ void spmv(const int* __restrict__ row_ptr, const int* __restrict__ col_idx,
                                const float* __restrict__ vals, const float* __restrict__ x,
                                float* __restrict__ y, int m)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    // TODO: threads past the last row must not touch row_ptr (it has m + 1 entries).
    // TODO: sum vals[j] * x[col_idx[j]] over the row's non-zeros and write y[row], also for
    //       empty rows (y is filled with garbage before every run).
    // TODO (fast): one thread per row leaves a power-law row with a million non-zeros to a single
    //       thread. Give rows several lanes (a warp, or a power-of-two group sized to the average
    //       row) and reduce with __shfl_xor_sync; split the longest rows across many warps.
    (void)col_idx; (void)vals; (void)x;
    if (row < m) {
        y[row] = (float)(row_ptr[row + 1] - row_ptr[row]);  // placeholder: counts instead of summing
    }
}
