"""One thread per output element, x over the output's rows, 32x8 blocks."""


def launch(gpu, X, W, dY, dX, dW, M, N, K):
    gpu.launch("grad_input", grid=(gpu.cdiv(M, 32), gpu.cdiv(K, 8)), block=(32, 8), args=(W, dY, dX, M, N, K))
    gpu.launch("grad_weight", grid=(gpu.cdiv(K, 32), gpu.cdiv(N, 8)), block=(32, 8), args=(X, dY, dW, M, N, K))
