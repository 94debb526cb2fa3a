"""One thread per row, 128-thread blocks."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    gpu.launch("spmv", grid=gpu.cdiv(m, 128), block=128, args=(row_ptr, col_idx, vals, x, y, m))
