"""Default launch plan for the matmul-backward stub: one thread per output element, 16×16 blocks."""


def launch(gpu, X, W, dY, dX, dW, M, N, K):
    tile = 16
    # x runs along the output's columns (consecutive threads, consecutive addresses), y along its rows.
    gpu.launch("grad_input", grid=(gpu.cdiv(K, tile), gpu.cdiv(M, tile)), block=(tile, tile),
               args=(W, dY, dX, M, N, K))
    gpu.launch("grad_weight", grid=(gpu.cdiv(N, tile), gpu.cdiv(K, tile)), block=(tile, tile),
               args=(X, dY, dW, M, N, K))
