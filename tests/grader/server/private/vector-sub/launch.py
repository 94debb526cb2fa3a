"""Default launch plan: one thread per element, 256 threads per block."""


def launch(gpu, a, b, c, n):
    gpu.launch("vector_sub", grid=gpu.cdiv(n, 256), block=256, args=(a, b, c, n))
