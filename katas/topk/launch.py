"""Default launch plan for the topk stub: candidates per chunk of a row, then one merge per row."""


def launch(gpu, x, values, indices, R, L, k):
    threads = 256
    chunk = max(4096, k)  # elements per block in stage 1
    chunks = gpu.cdiv(L, chunk)
    count = chunks * k  # candidates per row
    cand_vals = gpu.empty(R * count, "float32")
    cand_idx = gpu.empty(R * count, "int32")
    gpu.launch("topk_partial", grid=(chunks, R), block=threads, args=(x, L, k, chunk, cand_vals, cand_idx))
    gpu.launch("topk_merge", grid=R, block=threads, args=(cand_vals, cand_idx, count, k, values, indices))
