"""Default launch plan for the numba spmv stub: one thread per row."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    threads = 256
    gpu.launch("spmv", grid=gpu.cdiv(m, threads), block=threads, args=(row_ptr, col_idx, vals, x, y, m))
