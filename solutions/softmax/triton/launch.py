"""Launch plan of the Triton softmax solution: one program per row; a row of up to 4096 columns is
one tile (BLOCK the next power of two of C), longer rows stream tiles of 4096."""


def launch(gpu, x, y, R, C):
    BLOCK = min(1 << max(C - 1, 1).bit_length(), 4096)
    warps = 8 if BLOCK >= 4096 else 4
    gpu.launch("softmax", grid=R, args=(x, y, R, C), num_warps=warps, num_stages=1,
               constexprs=dict(BLOCK=BLOCK, ONE_TILE=C <= BLOCK))
