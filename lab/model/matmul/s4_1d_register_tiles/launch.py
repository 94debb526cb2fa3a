"""512 threads per 64x64 tile of C."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("matmul", grid=(gpu.cdiv(N, 64), gpu.cdiv(M, 64)), block=512, args=(A, B, C, M, N, K))
