"""One 1024-thread block per row."""


def launch(gpu, x, y, R, C):
    gpu.launch("softmax", grid=R, block=1024, args=(x, y, R, C))
