"""One thread per element of A, 16x16 blocks, row blocks on grid.x."""


def launch(gpu, A, B, R, C):
    gpu.launch("transpose", grid=(gpu.cdiv(R, 16), gpu.cdiv(C, 16)), block=(16, 16), args=(A, B, R, C))
