"""Launch plan of the gelu-linear solution: one 256-thread block per 128×128 tile of Y."""


def launch(gpu, X, W, bias, Y, M, N, K):
    gpu.launch("gelu_linear", grid=(gpu.cdiv(N, 128), gpu.cdiv(M, 128)), block=256, args=(X, W, bias, Y, M, N, K))
