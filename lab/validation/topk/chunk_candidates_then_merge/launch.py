"""k candidates per chunk of 4096 (blocks over chunks x rows), then one merge block per row."""


def launch(gpu, x, values, indices, R, L, k):
    chunk = max(4096, k)
    chunks = gpu.cdiv(L, chunk)
    count = chunks * k
    cand_vals = gpu.empty(R * count, "float32")
    cand_idx = gpu.empty(R * count, "int32")
    gpu.launch("topk_partial", grid=(chunks, R), block=256, args=(x, L, k, chunk, cand_vals, cand_idx))
    gpu.launch("topk_merge", grid=R, block=256, args=(cand_vals, cand_idx, count, k, values, indices))
