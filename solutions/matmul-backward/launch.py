"""Launch plan of the matmul-backward solution: dX as one tiled GEMM, dW split over the tokens
into S float32 partials that a small kernel sums."""


def launch(gpu, X, W, dY, dX, dW, M, N, K):
    tile = 128  # each 256-thread block owns a 128×128 output tile
    gpu.launch("grad_input", grid=(gpu.cdiv(K, tile), gpu.cdiv(M, tile)), block=256,
               args=(W, dY, dX, M, N, K))
    # Split-K: enough slices that dW's tiles fill every SM about once (two blocks per SM), but each
    # slice at least 64 tokens long so a slice's loop is not all prologue and epilogue.
    tiles = gpu.cdiv(K, tile) * gpu.cdiv(N, tile)
    splits = max(1, min(gpu.cdiv(M, 64), (2 * gpu.device.sm_count) // tiles))
    if splits == 1:
        gpu.launch("grad_weight", grid=(gpu.cdiv(N, tile), gpu.cdiv(K, tile), 1), block=256,
                   args=(X, dY, dW, M, N, K, 1))
        return
    part = gpu.empty(splits * K * N, "float32")
    gpu.launch("grad_weight", grid=(gpu.cdiv(N, tile), gpu.cdiv(K, tile), splits), block=256,
               args=(X, dY, part, M, N, K, splits))
    gpu.launch("sum_partials", grid=gpu.cdiv(K * N, 256), block=256, args=(part, dW, K * N, splits))
