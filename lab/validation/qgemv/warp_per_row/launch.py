"""One warp per row, 8 warps per block."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 8), block=256, args=(Wq, scales, x, y, N, K))
