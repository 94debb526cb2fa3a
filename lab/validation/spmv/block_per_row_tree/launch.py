"""One 128-thread block per row."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    gpu.launch("spmv", grid=m, block=128, args=(row_ptr, col_idx, vals, x, y, m))
