"""Zero y, then one thread per non-zero with an atomicAdd into its row."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    gpu.launch("zero", grid=gpu.cdiv(m, 256), block=256, args=(y, m))
    if nnz > 0:
        gpu.launch("spmv_nnz", grid=gpu.cdiv(nnz, 256), block=256, args=(row_ptr, col_idx, vals, x, y, m, nnz))
