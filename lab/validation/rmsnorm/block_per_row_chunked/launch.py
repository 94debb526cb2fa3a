"""One 256-thread block per row, a contiguous chunk of columns per thread."""


def launch(gpu, x, r, gamma, h, y, R, C, eps):
    gpu.launch("rmsnorm", grid=R, block=256, args=(x, r, gamma, h, y, R, C, eps))
