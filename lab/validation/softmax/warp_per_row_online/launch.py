"""One warp per row, 8 warps per block."""


def launch(gpu, x, y, R, C):
    gpu.launch("softmax", grid=gpu.cdiv(R, 8), block=256, args=(x, y, R, C))
