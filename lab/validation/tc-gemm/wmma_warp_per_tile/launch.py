"""One 32-thread block (one warp) per 16x16 tile of C."""


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=(gpu.cdiv(N, 16), gpu.cdiv(M, 16)), block=32, args=(A, B, C, M, N, K))
