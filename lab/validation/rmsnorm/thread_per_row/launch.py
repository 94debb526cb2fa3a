"""One thread per row, 128-thread blocks."""


def launch(gpu, x, r, gamma, h, y, R, C, eps):
    gpu.launch("rmsnorm", grid=gpu.cdiv(R, 128), block=128, args=(x, r, gamma, h, y, R, C, eps))
