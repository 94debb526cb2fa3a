"""Default launch plan for the Triton gelu-linear stub: one program per BM x BN tile of Y, grid x
along N. Tile sizes, warps and stages are the knobs an autotuner turns: choose them per shape."""


def launch(gpu, X, W, bias, Y, M, N, K):
    BM, BN, BK = 32, 32, 16
    gpu.launch("gelu_linear", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), args=(X, W, bias, Y, M, N, K),
               num_warps=4, num_stages=1, constexprs=dict(BM=BM, BN=BN, BK=BK))
