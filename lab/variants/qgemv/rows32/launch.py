"""Launch plan of the rows32 variant: a 256-thread block per 32 rows (two mma tiles), its 8 warps
splitting K."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 32), block=256, args=(Wq, scales, x, y, N, K))
