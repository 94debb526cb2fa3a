"""Initialise, then one launch per level over every vertex until nothing changes."""


def launch(gpu, row_ptr, col_idx, dist, n, m, source):
    blocks = gpu.cdiv(n, 256)
    gpu.launch("bfs_init", grid=blocks, block=256, args=(dist, n, source))
    changed = gpu.empty(1, "int32")
    for level in range(n):
        gpu.memset(changed, 0)
        gpu.launch("bfs_level", grid=blocks, block=256, args=(row_ptr, col_idx, dist, n, level, changed))
        if gpu.read(changed) == 0:
            break
