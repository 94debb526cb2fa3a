"""32x32 threads per 32x32 tile of C; x walks columns."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("matmul", grid=(gpu.cdiv(N, 32), gpu.cdiv(M, 32)), block=(32, 32), args=(A, B, C, M, N, K))
