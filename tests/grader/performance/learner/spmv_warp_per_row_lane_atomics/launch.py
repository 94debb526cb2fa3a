"""y zeroed, then a warp per row, 128-thread blocks."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    gpu.memset(y, 0)
    gpu.launch("spmv", grid=gpu.cdiv(m, 4), block=128, args=(row_ptr, col_idx, vals, x, y, m))
