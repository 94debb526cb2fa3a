"""One 128-thread block per row."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=N, block=128, args=(Wq, scales, x, y, N, K))
