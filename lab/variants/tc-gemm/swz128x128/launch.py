"""Launch plan of the swz128x128 variant: 128×128 tiles on a 1-D grid, four stages of
(128×32 + 32×128) bf16 = 65536 bytes of dynamic shared memory (two blocks an SM)."""

STAGES, BM, BN, BK = 4, 128, 128, 32
SHARED = STAGES * (BM * BK + BK * BN) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
