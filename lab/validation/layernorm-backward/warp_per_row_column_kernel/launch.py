"""Warp per row for dx (8 warps per block), thread per column for dgamma and dbeta."""


def launch(gpu, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C):
    gpu.launch("grad_x", grid=gpu.cdiv(R, 8), block=256, args=(dy, x, mean, rstd, gamma, dx, R, C))
    gpu.launch("grad_params", grid=gpu.cdiv(C, 128), block=128, args=(dy, x, mean, rstd, dgamma, dbeta, R, C))
