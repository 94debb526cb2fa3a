"""Launch plan of the tc-gemm solution: one 256-thread block per 128×256 tile of C on a 1-D grid
(the kernel maps block indices to tiles in groups of 8 tile rows), three stages of A and B tiles:
3 × (128×64 + 64×256) × 2 bytes = 147456 bytes of dynamic shared memory, over the 48 KB static
limit, so it is dynamic."""

STAGES, BM, BN, BK = 3, 128, 256, 64
SHARED = STAGES * (BM * BK + BK * BN) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
