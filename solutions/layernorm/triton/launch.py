"""Launch plan of the Triton layernorm solution: one program per row; rows of up to 8192 columns
are one tile (BLOCK the next power of two of C), longer rows stream tiles of 4096."""


def launch(gpu, x, gamma, beta, y, mean, rstd, R, C, eps):
    BLOCK = 1 << max(C - 1, 1).bit_length()
    one_tile = BLOCK <= 8192
    if not one_tile:
        BLOCK = 4096
    warps = 8 if BLOCK >= 4096 else 4
    gpu.launch("layernorm", grid=R, args=(x, gamma, beta, y, mean, rstd, R, C, eps), num_warps=warps,
               num_stages=1, constexprs=dict(BLOCK=BLOCK, ONE_TILE=one_tile))
