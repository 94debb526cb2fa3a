"""Default launch plan for the Triton matmul stub: one program per BM x BN tile of C, grid x along N."""


def launch(gpu, A, B, C, M, N, K):
    BM, BN, BK = 32, 32, 16
    gpu.launch("matmul", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), args=(A, B, C, M, N, K), num_warps=4,
               num_stages=1, constexprs=dict(BM=BM, BN=BN, BK=BK))
