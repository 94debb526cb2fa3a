"""Default launch plan for the vector-add stub: one thread per element, 256 threads per block."""


def launch(gpu, a, b, c, n):
    threads = 256
    gpu.launch("vector_add", grid=gpu.cdiv(n, threads), block=threads, args=(a, b, c, n))
