"""One thread per row, 64-thread blocks."""


def launch(gpu, logits, targets, loss, dlogits, N, V, ignore_index):
    gpu.launch("cross_entropy", grid=gpu.cdiv(N, 64), block=64, args=(logits, targets, loss, dlogits, N, V, ignore_index))
