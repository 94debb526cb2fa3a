"""One block of 1024 threads does everything."""


def launch(gpu, topk_ids, x, counts, offsets, perm, gathered, N, E, D):
    gpu.launch("moe_dispatch", grid=1, block=1024, args=(topk_ids, x, counts, offsets, perm, gathered, N, E, D))
