"""A contiguous chunk of 64 elements per thread, 256 threads per block."""


def launch(gpu, a, b, c, n):
    gpu.launch("vector_add", grid=max(1, gpu.cdiv(n, 256 * 64)), block=256, args=(a, b, c, n))
