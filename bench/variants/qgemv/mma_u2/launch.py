"""Launch plan of the qgemv mma kernel: a 256-thread block per 16-row tile (its 8 warps split K)."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K))
