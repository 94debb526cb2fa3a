"""Initialise, then one launch per level with a warp per vertex (8 per block) until nothing changes."""


def launch(gpu, row_ptr, col_idx, dist, n, m, source):
    gpu.launch("bfs_init", grid=gpu.cdiv(n, 256), block=256, args=(dist, n, source))
    changed = gpu.empty(1, "int32")
    for level in range(n):
        gpu.memset(changed, 0)
        gpu.launch("bfs_level", grid=gpu.cdiv(n, 8), block=256, args=(row_ptr, col_idx, dist, n, level, changed))
        if gpu.read(changed) == 0:
            break
