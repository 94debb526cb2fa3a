"""One thread per row, 128 per block."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 128), block=128, args=(Wq, scales, x, y, N, K))
