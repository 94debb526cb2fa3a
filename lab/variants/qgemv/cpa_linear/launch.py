"""Launch plan of the cpa_linear variant: a 256-thread block per 16-row tile; K % 1024 == 0 takes
the cp.async stream kernel, other K the solution's rounds."""


def launch(gpu, Wq, scales, x, y, N, K):
    name = "qgemv_stream" if K % 1024 == 0 else "qgemv"
    gpu.launch(name, grid=gpu.cdiv(N, 16), block=256, args=(Wq, scales, x, y, N, K))
