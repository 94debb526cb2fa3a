"""Launch plan of the adamw solution: one persistent multi-tensor launch (it builds its own chunk table)."""

CHUNK = 4096  # as kernel.cu
BLOCKS_PER_SM = 3  # adamw_step's __launch_bounds__: what fits the register file


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    # Bias corrections are two scalars per step: computed here once, in double, not per element.
    bc1, bc2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
    # Exactly the resident blocks (no second wave), never more than there are chunks (at most one
    # per tensor plus N / CHUNK); shared memory holds the chunk table, T + 1 ints.
    blocks = min(BLOCKS_PER_SM * gpu.device.sm_count, T + gpu.cdiv(N, CHUNK))
    gpu.launch("adamw_step", grid=blocks, block=256, shared=4 * (T + 1),
               args=(p, g, m, v, offsets, sizes, wd, T, lr, beta1, beta2, eps, bc1, bc2))
