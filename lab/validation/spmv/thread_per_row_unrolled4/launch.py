"""One thread per row, 64-thread blocks."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    gpu.launch("spmv", grid=gpu.cdiv(m, 64), block=64, args=(row_ptr, col_idx, vals, x, y, m))
