"""Default launch plan for the BFS stub: initialise, then one launch per level until nothing changes."""


def launch(gpu, row_ptr, col_idx, dist, n, m, source):
    threads = 256
    blocks = gpu.cdiv(n, threads)
    gpu.launch("bfs_init", grid=blocks, block=threads, args=(dist, n, source))
    changed = gpu.empty(1, "int32")
    # The host loop: BFS needs as many levels as the graph's depth from the source (up to n - 1).
    for level in range(n):
        gpu.memset(changed, 0)
        gpu.launch("bfs_level", grid=blocks, block=threads, args=(row_ptr, col_idx, dist, n, level, changed))
        if gpu.read(changed) == 0:  # one int back to the host: is the next frontier empty?
            break
