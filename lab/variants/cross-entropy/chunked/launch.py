"""Launch plan of the cross-entropy solution: count the valid rows, then one block per chunk of
a row (G chunks per row), the chunk held in registers from load to store."""

CP = 16  # floats per thread, as in kernel.cu


def launch(gpu, logits, targets, loss, dlogits, N, V, ignore_index):
    n_valid = gpu.empty(1, "int32")
    gpu.launch("count_valid", grid=1, block=1024, args=(targets, N, ignore_index, n_valid))
    # 512 threads x 16 floats = 8192 floats (32 KB) per chunk, three blocks per SM; short rows (the
    # CPU cases) get one chunk of fewer threads, a warp per 512 floats, so few threads sit idle.
    threads = min(512, 32 * gpu.cdiv(V, 32 * CP))
    chunks = gpu.cdiv(V, threads * CP)
    stats = gpu.empty(max(1, N * chunks) * 2, "float32")  # (m, s) per chunk
    counters = gpu.zeros(N + 1, "int32")  # arrivals per row, then the ticket counter
    gpu.launch("cross_entropy", grid=N * chunks, block=threads,
               args=(logits, targets, n_valid, stats, counters, counters.view(N, 1), loss, dlogits,
                     V, chunks, ignore_index))
