"""32x32 shared tiles, 32x32 threads."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=(gpu.cdiv(N, 32), gpu.cdiv(M, 32)), block=(32, 32), args=(A, B, C, M, N, K))
