"""256 threads per 128x128 tile of C."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("matmul", grid=(gpu.cdiv(N, 128), gpu.cdiv(M, 128)), block=256, args=(A, B, C, M, N, K))
