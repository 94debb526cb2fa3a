"""One warp per row, 8 warps per block."""


def launch(gpu, logits, targets, loss, dlogits, N, V, ignore_index):
    gpu.launch("cross_entropy", grid=gpu.cdiv(N, 8), block=256, args=(logits, targets, loss, dlogits, N, V, ignore_index))
