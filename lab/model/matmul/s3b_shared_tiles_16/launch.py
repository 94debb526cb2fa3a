"""16x16 threads per 16x16 tile of C."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("matmul", grid=(gpu.cdiv(N, 16), gpu.cdiv(M, 16)), block=(16, 16), args=(A, B, C, M, N, K))
