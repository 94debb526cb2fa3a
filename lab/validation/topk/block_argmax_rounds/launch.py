"""One 256-thread block per row, k argmax rounds."""


def launch(gpu, x, values, indices, R, L, k):
    gpu.launch("topk_rows", grid=R, block=256, args=(x, values, indices, L, k))
