"""Launch plan of the Triton matmul solution: one program per 64 x 64 tile of C, grid x along N."""


def launch(gpu, A, B, C, M, N, K):
    BM, BN, BK = 64, 64, 32
    gpu.launch("matmul", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), args=(A, B, C, M, N, K), num_warps=4,
               num_stages=2, constexprs=dict(BM=BM, BN=BN, BK=BK))
