"""Launch plan of the naive transpose: 32×8 blocks, a grid of columns × rows (rows grid-strided)."""


def launch(gpu, A, B, R, C):
    block = (32, 8)
    # gridDim.y stops at 65535; the kernel strides over the rows beyond it.
    grid = (gpu.cdiv(C, block[0]), min(gpu.cdiv(R, block[1]), 65535))
    gpu.launch("transpose", grid=grid, block=block, args=(A, B, R, C))
