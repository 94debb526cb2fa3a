"""Launch plan of the w16_256x128 variant: 256×128 tiles on a 1-D grid, 512 threads (16 warps) a
block, four stages of (256×32 + 32×128) bf16 = 98304 bytes of dynamic shared memory."""

STAGES, BM, BN, BK = 4, 256, 128, 32
SHARED = STAGES * (BM * BK + BK * BN) * 2


def launch(gpu, A, B, C, M, N, K):
    gpu.launch("tc_gemm", grid=gpu.cdiv(M, BM) * gpu.cdiv(N, BN), block=512, args=(A, B, C, M, N, K),
               shared=SHARED)
