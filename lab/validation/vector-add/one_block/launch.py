"""One block of 1024 threads for the whole array."""


def launch(gpu, a, b, c, n):
    gpu.launch("vector_add", grid=1, block=1024, args=(a, b, c, n))
