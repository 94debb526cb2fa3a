"""The solution's plan: at most 64 blocks; the kernel's grid-stride loop covers the rest."""


def launch(gpu, a, b, c, n):
    gpu.launch("vector_sub", grid=max(1, min(gpu.cdiv(n, 256), 64)), block=256, args=(a, b, c, n))
