"""Default launch plan for the transpose stub: one 32×8 block per 32×32 tile of A."""


def launch(gpu, A, B, R, C):
    # gridDim.y stops at 65535 tiles (R up to 2,097,120 rows); a 1-D grid of tiles has no such limit.
    grid = (gpu.cdiv(C, 32), gpu.cdiv(R, 32))
    gpu.launch("transpose", grid=grid, block=(32, 8), args=(A, B, R, C))
