"""Launch plan of the tile128x256 variant: 128×256 tiles, 3 stages of (128×40 + 32×264) bf16."""

STAGES, BM, BN, BK = 3, 128, 256, 32
SHARED = STAGES * (BM * (BK + 8) + BK * (BN + 8)) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
