"""One 1024-thread block per row; the row padded to a power of two in dynamic shared memory (a global
scratch buffer when it does not fit)."""


def launch(gpu, x, values, indices, R, L, k):
    P = 1
    while P < L:
        P *= 2
    if 8 * P <= gpu.device.max_shared_per_block_optin:
        gpu.launch("topk_sort", grid=R, block=1024, shared=8 * P, args=(x, values, indices, L, k, P))
    else:
        scratch = gpu.empty(R * P, "uint64")
        gpu.launch("topk_sort_global", grid=R, block=1024, args=(x, values, indices, L, k, P, scratch))
