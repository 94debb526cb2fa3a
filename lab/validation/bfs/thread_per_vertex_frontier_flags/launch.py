"""Init, then per level: clear the next flags, expand the frontier, read the 'found any' flag."""


def launch(gpu, row_ptr, col_idx, dist, n, m, source):
    blocks = gpu.cdiv(n, 128)
    frontier = gpu.empty(n, "int32")
    nxt = gpu.empty(n, "int32")
    count = gpu.empty(1, "int32")
    gpu.launch("init", grid=blocks, block=128, args=(dist, frontier, n, source))
    for level in range(n):
        gpu.memset(nxt, 0)
        gpu.memset(count, 0)
        gpu.launch("expand", grid=blocks, block=128, args=(row_ptr, col_idx, dist, frontier, nxt, n, level, count))
        if gpu.read(count) == 0:
            break
        frontier, nxt = nxt, frontier
