"""Initialise, then one launch per level (128-thread blocks) until a level labels nobody."""


def launch(gpu, row_ptr, col_idx, dist, n, m, source):
    blocks = gpu.cdiv(n, 128)
    gpu.launch("bfs_init", grid=blocks, block=128, args=(dist, n, source))
    count = gpu.empty(1, "int32")
    for level in range(n):
        gpu.memset(count, 0)
        gpu.launch("bfs_level", grid=blocks, block=128, args=(row_ptr, col_idx, dist, n, level, count))
        if gpu.read(count) == 0:
            break
