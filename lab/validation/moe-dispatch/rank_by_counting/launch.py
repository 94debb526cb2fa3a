"""count, scan, rank (thread per assignment), gather (thread per element)."""


def launch(gpu, topk_ids, x, counts, offsets, perm, gathered, N, E, D):
    gpu.memset(counts, 0)
    gpu.launch("count", grid=gpu.cdiv(2 * N, 256), block=256, args=(topk_ids, counts, N))
    gpu.launch("scan", grid=1, block=32, args=(counts, offsets, E))
    gpu.launch("rank", grid=gpu.cdiv(2 * N, 256), block=256, args=(topk_ids, offsets, perm, N))
    gpu.launch("gather", grid=max(1, gpu.cdiv(2 * N * D, 256)), block=256, args=(x, perm, gathered, N, D))
