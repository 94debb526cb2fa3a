"""16x16 shared tiles, 16x16 threads, two kernels."""


def launch(gpu, X, W, dY, dX, dW, M, N, K):
    gpu.launch("grad_input", grid=(gpu.cdiv(K, 16), gpu.cdiv(M, 16)), block=(16, 16), args=(W, dY, dX, M, N, K))
    gpu.launch("grad_weight", grid=(gpu.cdiv(N, 16), gpu.cdiv(K, 16)), block=(16, 16), args=(X, dY, dW, M, N, K))
