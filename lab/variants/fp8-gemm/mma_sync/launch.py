"""Launch plan of the fp8-gemm solution: one 128-thread block per 64×64 tile of C (x along N, y
along M); the tiles live in 18 KB of static shared memory."""


def launch(gpu, A, As, B, Bs, C, M, N, K):
    gpu.launch("fp8_gemm", grid=(gpu.cdiv(N, 64), gpu.cdiv(M, 64)), block=128, args=(A, As, B, Bs, C, M, N, K))
