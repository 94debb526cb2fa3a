"""Launch plan of the cross-entropy solution: count the valid rows, then one block per row."""


def launch(gpu, logits, targets, loss, dlogits, N, V, ignore_index):
    n_valid = gpu.empty(1, "int32")
    gpu.launch("count_valid", grid=1, block=1024, args=(targets, N, ignore_index, n_valid))
    # 1024 threads keep four float4 loads each in flight over a 500 KB row; short rows (the CPU
    # cases) get fewer threads, a warp for every 128 floats, so few threads sit idle.
    threads = min(1024, max(32, 32 * gpu.cdiv(V, 128)))
    gpu.launch("cross_entropy", grid=N, block=threads,
               args=(logits, targets, n_valid, loss, dlogits, V, ignore_index))
