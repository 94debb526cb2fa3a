"""A plan that asks for more threads per block than any CUDA GPU has."""


def launch(gpu, x, out, n):
    threads = 2048
    gpu.memset(out, 0)
    gpu.launch("reduce", grid=gpu.cdiv(n, threads * 4), block=threads, args=(x, out, n))
