"""One warp per row, 8 warps per block."""


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    gpu.launch("spmv", grid=max(1, gpu.cdiv(m, 8)), block=256, args=(row_ptr, col_idx, vals, x, y, m))
