"""Launch plan of the one_launch_u2 variant: one persistent launch that builds its own chunk table."""

CHUNK = 4096  # as kernel.cu
UNROLL, BLOCKS_PER_SM = 2, 4  # adamw_fused2: as its __launch_bounds__


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    # Bias corrections are two scalars per step: computed here once, in double, not per element.
    bc1, bc2 = 1.0 - beta1 ** t, 1.0 - beta2 ** t
    blocks = min(BLOCKS_PER_SM * gpu.device.sm_count, T + gpu.cdiv(N, CHUNK))  # at most one per chunk
    gpu.launch(f"adamw_fused{UNROLL}", grid=blocks, block=256, shared=4 * (T + 1),
               args=(p, g, m, v, offsets, sizes, wd, T, lr, beta1, beta2, eps, bc1, bc2))
