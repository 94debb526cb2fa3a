"""Default launch plan for the transpose stub: one thread per element of A, 32×8 blocks."""


def launch(gpu, A, B, R, C):
    block = (32, 8)
    grid = (gpu.cdiv(C, block[0]), gpu.cdiv(R, block[1]))
    gpu.launch("transpose", grid=grid, block=block, args=(A, B, R, C))
