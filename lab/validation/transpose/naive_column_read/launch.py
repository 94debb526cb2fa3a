"""One thread per element of B, 16x16 blocks."""


def launch(gpu, A, B, R, C):
    gpu.launch("transpose", grid=(gpu.cdiv(R, 16), gpu.cdiv(C, 16)), block=(16, 16), args=(A, B, R, C))
