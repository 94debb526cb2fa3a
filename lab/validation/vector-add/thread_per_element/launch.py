"""One thread per element, 256 per block."""


def launch(gpu, a, b, c, n):
    gpu.launch("vector_add", grid=gpu.cdiv(n, 256), block=256, args=(a, b, c, n))
