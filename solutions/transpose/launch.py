"""Launch plan of the transpose solution: one 32×8 block per 32×32 tile, on a 1-D grid of tiles."""


def launch(gpu, A, B, R, C):
    tiles = gpu.cdiv(R, 32) * gpu.cdiv(C, 32)  # a 1-D grid reaches 2^31 - 1 blocks, any shape fits
    gpu.launch("transpose", grid=tiles, block=(32, 8), args=(A, B, R, C))
