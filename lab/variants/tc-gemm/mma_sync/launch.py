"""Launch plan of the tc-gemm solution: one 256-thread block per 256×128 tile of C on a 1-D grid
(the kernel maps block indices to tiles in groups of 8 tile rows), four stages of A and B tiles:
4 × (256×32 + 32×128) × 2 bytes = 98304 bytes of dynamic shared memory, over the 48 KB static
limit, so it is dynamic."""

STAGES, BM, BN, BK = 4, 256, 128, 32
SHARED = STAGES * (BM * BK + BK * BN) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
