"""Launch plan of the warp_rows variant: a warp per 16-row tile over all of K, 4 warps a block."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 64), block=128, args=(Wq, scales, x, y, N, K))
