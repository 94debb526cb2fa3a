"""One 256-thread block per row."""


def launch(gpu, x, y, R, C):
    gpu.launch("softmax", grid=R, block=256, args=(x, y, R, C))
