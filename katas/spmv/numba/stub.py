# y = A x for a sparse m x k matrix A in CSR form (row_ptr, col_idx, vals), float32, in numba.cuda.
# `kata grade` compiles this file with numba.cuda.compile_ptx for the H200 (sm_90).
from numba import cuda, float32


@cuda.jit
def spmv(row_ptr, col_idx, vals, x, y, m):
    row = cuda.grid(1)
    # TODO: stop the threads past the last row.
    # TODO: sum vals[j] * x[col_idx[j]] over j in [row_ptr[row], row_ptr[row + 1]) and write y[row]
    #       (an empty row's y is 0). For speed, give each row a warp (cuda.shfl_down_sync to combine).
    pass
