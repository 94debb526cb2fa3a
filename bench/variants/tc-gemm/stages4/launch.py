"""Launch plan of the stages4 variant: the solution's tile with a 4-stage ring."""

STAGES, BM, BN, BK = 4, 128, 128, 32
SHARED = STAGES * (BM * (BK + 8) + BK * (BN + 8)) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
