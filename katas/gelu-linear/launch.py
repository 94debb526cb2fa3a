"""Default launch plan for the gelu-linear stub: one thread per element of Y, 16×16 threads per block."""


def launch(gpu, X, W, bias, Y, M, N, K):
    tile = 16
    gpu.launch("gelu_linear", grid=(gpu.cdiv(N, tile), gpu.cdiv(M, tile)), block=(tile, tile),
               args=(X, W, bias, Y, M, N, K))
