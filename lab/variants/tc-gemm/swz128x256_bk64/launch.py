"""Launch plan of the swz128x256_bk64 variant: 128×256 tiles on a 1-D grid, three stages of
(128×64 + 64×256) bf16 = 147456 bytes of dynamic shared memory."""

STAGES, BM, BN, BK = 3, 128, 256, 64
SHARED = STAGES * (BM * BK + BK * BN) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
