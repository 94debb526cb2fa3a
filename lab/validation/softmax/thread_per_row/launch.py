"""One thread per row, 128-thread blocks."""


def launch(gpu, x, y, R, C):
    gpu.launch("softmax", grid=gpu.cdiv(R, 128), block=128, args=(x, y, R, C))
