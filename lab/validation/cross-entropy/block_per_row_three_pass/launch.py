"""Count the valid rows, then one 256-thread block per row."""


def launch(gpu, logits, targets, loss, dlogits, N, V, ignore_index):
    valid = gpu.zeros(1, "int32")
    gpu.launch("count_valid", grid=gpu.cdiv(N, 256), block=256, args=(targets, valid, N, ignore_index))
    gpu.launch("cross_entropy", grid=N, block=256, args=(logits, targets, loss, dlogits, valid, N, V, ignore_index))
