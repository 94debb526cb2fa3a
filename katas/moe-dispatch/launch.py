"""Default launch plan for the moe-dispatch stub: one thread, so a plain serial kernel is correct."""


def launch(gpu, topk_ids, x, counts, offsets, perm, gathered, N, E, D):
    gpu.launch("moe_dispatch", grid=1, block=1, args=(topk_ids, x, counts, offsets, perm, gathered, N, E, D))
