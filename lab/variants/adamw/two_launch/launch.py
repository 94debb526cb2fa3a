"""Launch plan of the two_launch variant (the adamw solution before one_launch): a chunk table, then one persistent multi-tensor launch."""

CHUNK = 4096  # as kernel.cu


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    chunk_start = gpu.empty(T + 1, "int32")
    gpu.launch("adamw_chunks", grid=1, block=1024, args=(sizes, T, chunk_start))
    # Bias corrections are two scalars per step: computed here once, in double, not per element.
    bc1, bc2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
    # Enough resident blocks to keep HBM busy (8 per SM of 256 threads), never more than there
    # are chunks (at most one per tensor plus N / CHUNK).
    blocks = min(8 * gpu.device.sm_count, T + gpu.cdiv(N, CHUNK))
    gpu.launch("adamw_step", grid=blocks, block=256,
               args=(p, g, m, v, offsets, sizes, wd, chunk_start, T, lr, beta1, beta2, eps, bc1, bc2))
