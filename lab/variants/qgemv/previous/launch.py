"""Launch plan of the first qgemv solution (lab/variants/qgemv/previous): one warp per row,
eight rows per 256-thread block."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 8), block=256, args=(Wq, scales, x, y, N, K))
