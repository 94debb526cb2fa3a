"""Initialise, then expand the frontier queue level by level; the host reads each queue's length."""


def launch(gpu, row_ptr, col_idx, dist, n, m, source):
    gpu.launch("bfs_init", grid=gpu.cdiv(n, 256), block=256, args=(dist, n, source))
    queues = [gpu.empty(n, "int32"), gpu.empty(n, "int32")]
    gpu.launch("bfs_seed", grid=1, block=1, args=(queues[0], source))
    next_size = gpu.empty(1, "int32")
    size, level = 1, 0
    while size > 0:
        gpu.memset(next_size, 0)
        gpu.launch("bfs_expand", grid=gpu.cdiv(size, 256), block=256,
                   args=(row_ptr, col_idx, dist, queues[0], size, queues[1], next_size, level))
        size = int(gpu.read(next_size))
        queues.reverse()
        level += 1
