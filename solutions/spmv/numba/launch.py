"""Launch plan of the numba spmv solution: one warp per row, 8 rows per block."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    warps = 8  # kernel.py's WARPS
    gpu.launch("spmv", grid=gpu.cdiv(m, warps), block=32 * warps, args=(row_ptr, col_idx, vals, x, y, m))
