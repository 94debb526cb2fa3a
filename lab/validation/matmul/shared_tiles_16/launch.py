"""16x16 shared tiles, 16x16 threads."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("matmul", grid=(gpu.cdiv(N, 16), gpu.cdiv(M, 16)), block=(16, 16), args=(A, B, C, M, N, K))
