"""One thread per element, flat 1-D grid of 256-thread blocks."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("matmul", grid=max(1, gpu.cdiv(M * N, 256)), block=256, args=(A, B, C, M, N, K))
