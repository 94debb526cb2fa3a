"""Launch plan of the tc-gemm solution: one 256-thread block per 128×128 tile of C, three stages of
A and B tiles in dynamic shared memory (3 × (128×40 + 32×136) × 2 bytes = 56832 bytes, over the
48 KB static limit, so it is dynamic)."""

STAGES, BM, BN, BK = 3, 128, 128, 32
SHARED = STAGES * (BM * (BK + 8) + BK * (BN + 8)) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), block=256, args=(A, B, C, M, N, K),
               shared=SHARED)
