"""One 32x8 block per 32x32 tile."""


def launch(gpu, A, B, R, C):
    gpu.launch("transpose", grid=(gpu.cdiv(C, 32), gpu.cdiv(R, 32)), block=(32, 8), args=(A, B, R, C))
