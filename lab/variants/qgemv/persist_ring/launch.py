"""Launch plan of the persist_ring variant: 2 blocks of 8 warps an SM (its __launch_bounds__), each
walking 16-row tiles with a stride of the grid; never more blocks than tiles."""

BLOCKS_PER_SM = 2


def launch(gpu, Wq, scales, x, y, N, K):
    blocks = min(gpu.cdiv(N, 16), BLOCKS_PER_SM * gpu.device.sm_count)
    gpu.launch("qgemv", grid=blocks, block=256, args=(Wq, scales, x, y, N, K))
