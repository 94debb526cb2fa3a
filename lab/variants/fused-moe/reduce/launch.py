"""Variant reduce (GEMM 2 writes per-pair rows, moe_sum adds them; no atomics, no memset).
Launch plan of the fused-moe solution: sort the (token, slot) pairs by expert (count, scan,
scatter), then the two grouped GEMMs over the experts' 128-row tiles (GEMM 1: 64 columns of gate
and up per block, GEMM 2: 128 columns of a per-pair buffer), then moe_sum writes Y. H and I multiples of 4 (the bench shape) take the float4-staged kernels (_v4)."""


def launch(gpu, X, ids, weights, W1, W2, Y, T, H, I, E, k):
    pairs, BM = T * k, 128
    counts, offsets, fill = gpu.zeros(E, "int32"), gpu.empty(E, "int32"), gpu.empty(E, "int32")
    tile_start, order = gpu.empty(E + 1, "int32"), gpu.empty(pairs, "int32")
    act = gpu.empty(pairs * I, "float32")
    gpu.launch("moe_count", grid=gpu.cdiv(pairs, 256), block=256, args=(ids, counts, pairs))
    gpu.launch("moe_scan", grid=1, block=32, args=(counts, offsets, fill, tile_start, E))
    gpu.launch("moe_scatter", grid=gpu.cdiv(pairs, 256), block=256, args=(ids, fill, order, pairs))
    tiles = gpu.cdiv(pairs, BM) + E  # at most one partial tile per expert beyond the full ones
    part = gpu.empty(pairs * H, "float32")  # variant: per-pair rows, summed by moe_sum
    v4 = "_v4" if H % 4 == 0 and I % 4 == 0 else ""
    gpu.launch(
        "moe_gemm1" + v4,
        grid=(gpu.cdiv(I, 64), tiles),
        block=256,
        args=(X, W1, order, offsets, counts, tile_start, act, H, I, E, k),
    )
    gpu.launch(
        "moe_gemm2" + v4,
        grid=(gpu.cdiv(H, 128), tiles),
        block=256,
        args=(act, W2, order, offsets, counts, tile_start, weights, part, H, I, E, k),
    )
    gpu.launch("moe_sum", grid=min(gpu.cdiv(T * H, 256), 132 * 8), block=256, args=(part, Y, T, H, k))
