"""Launch plan of the Triton gelu-linear solution: the tile shape and warps per shape, as an
autotuner would pick them (measured choices on an H200 replace this table when the kata is
timed there): small problems get small tiles so every SM has a program."""

CONFIGS = [  # (most outputs, BM, BN, BK, warps, stages), first match wins
    (64 * 64, 32, 32, 16, 4, 1),
    (1024 * 1024, 64, 64, 32, 4, 2),
    (None, 128, 128, 32, 8, 3),
]


def launch(gpu, X, W, bias, Y, M, N, K):
    BM, BN, BK, warps, stages = next(c[1:] for c in CONFIGS if c[0] is None or M * N <= c[0])
    gpu.launch("gelu_linear", grid=(gpu.cdiv(N, BN), gpu.cdiv(M, BM)), args=(X, W, bias, Y, M, N, K),
               num_warps=warps, num_stages=stages, constexprs=dict(BM=BM, BN=BN, BK=BK))
