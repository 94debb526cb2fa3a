"""One warp per row, 8 warps per block."""


def launch(gpu, x, r, gamma, h, y, R, C, eps):
    gpu.launch("rmsnorm", grid=gpu.cdiv(R, 8), block=256, args=(x, r, gamma, h, y, R, C, eps))
