"""Launch plan of the CUDA-core qgemv variant: a 128-thread block per 4 rows (its 4 warps split K)."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 4), block=128, args=(Wq, scales, x, y, N, K))
