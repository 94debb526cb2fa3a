"""count, scan, place (thread per expert), gather (one 256-thread block per row)."""


def launch(gpu, topk_ids, x, counts, offsets, perm, gathered, N, E, D):
    gpu.memset(counts, 0)
    gpu.launch("count", grid=gpu.cdiv(2 * N, 256), block=256, args=(topk_ids, counts, N))
    gpu.launch("scan", grid=1, block=1, args=(counts, offsets, E))
    gpu.launch("place", grid=gpu.cdiv(E, 64), block=64, args=(topk_ids, offsets, perm, N, E))
    gpu.launch("gather", grid=2 * N, block=256, args=(x, perm, gathered, D))
