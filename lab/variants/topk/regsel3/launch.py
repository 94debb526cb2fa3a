"""Launch plan of the register radix-select topk: one launch for L <= 16384, merge rounds beyond."""

# (kernel, threads, elements per block); must match kernel.cu's topk_4k and topk_16k
SMALL = ("topk_4k", 256, 4096)
LARGE = ("topk_16k", 512, 16384)


def launch(gpu, x, values, indices, R, L, k):
    P = 1
    while P < k:
        P *= 2
    shared = 8 * P  # the sort's keys and indices; the histogram is static
    src, src_idx, has_idx, length = x, indices, 0, L
    while True:
        name, threads, chunk = SMALL if length <= SMALL[2] else LARGE
        chunks = gpu.cdiv(length, chunk)
        if chunks == 1:
            gpu.launch(name, grid=(1, R), block=threads, shared=shared,
                       args=(src, src_idx, has_idx, length, length, k, P, values, indices, k))
            return
        # Each chunk keeps its k best (with their original indices); the next round picks among
        # them. k <= 4096 = chunk / 4, so every round shrinks the rows at least fourfold.
        cand = chunks * k
        cand_vals = gpu.empty(R * cand, "float32")
        cand_idx = gpu.empty(R * cand, "int32")
        gpu.launch(name, grid=(chunks, R), block=threads, shared=shared,
                   args=(src, src_idx, has_idx, length, length, k, P, cand_vals, cand_idx, cand))
        src, src_idx, has_idx, length = cand_vals, cand_idx, 1, cand
