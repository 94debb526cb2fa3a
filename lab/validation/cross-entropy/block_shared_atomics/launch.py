"""One 1024-thread block per row."""


def launch(gpu, logits, targets, loss, dlogits, N, V, ignore_index):
    gpu.launch("cross_entropy", grid=N, block=1024, args=(logits, targets, loss, dlogits, N, V, ignore_index))
