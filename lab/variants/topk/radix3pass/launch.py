"""Launch plan of the topk solution: top-k per chunk of a row; rounds of merging for long rows."""

THREADS = 256
BINS = 2048  # must match kernel.cu (RADIX_BITS = 11)
CHUNK = 16384  # elements per block: a whole row for most shapes


def launch(gpu, x, values, indices, R, L, k):
    P = 1
    while P < k:
        P *= 2
    shared = 4 * BINS + 8 * P
    # Each chunk must hold more than k elements so that every round shrinks the rows.
    chunk = max(CHUNK, 4 * k)
    src, src_idx, has_idx, length = x, indices, 0, L
    while True:
        chunks = gpu.cdiv(length, chunk)
        if chunks == 1:
            gpu.launch("topk_chunk", grid=(1, R), block=THREADS, shared=shared,
                       args=(src, src_idx, has_idx, length, length, chunk, k, P, values, indices, k))
            return
        # Each chunk keeps its k best (with their original indices); the next round picks among them.
        cand = chunks * k
        cand_vals = gpu.empty(R * cand, "float32")
        cand_idx = gpu.empty(R * cand, "int32")
        gpu.launch("topk_chunk", grid=(chunks, R), block=THREADS, shared=shared,
                   args=(src, src_idx, has_idx, length, length, chunk, k, P, cand_vals, cand_idx, cand))
        src, src_idx, has_idx, length = cand_vals, cand_idx, 1, cand
