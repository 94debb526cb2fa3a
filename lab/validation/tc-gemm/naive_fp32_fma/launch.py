"""One thread per element of C, 16x16 blocks."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=(gpu.cdiv(N, 16), gpu.cdiv(M, 16)), block=(16, 16), args=(A, B, C, M, N, K))
