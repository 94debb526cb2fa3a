"""Launch plan of the qgemv solution: a 256-thread block per 16-row tile, its 8 warps splitting K
(one mma.sync tile of 16 rows; at 4096 rows that is 256 blocks, two an SM)."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K))
