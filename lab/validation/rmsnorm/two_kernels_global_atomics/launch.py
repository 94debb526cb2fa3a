"""Flat grid of 256-thread blocks, per-row sums by global atomics, then a second pass."""


def launch(gpu, x, r, gamma, h, y, R, C, eps):
    sumsq = gpu.zeros(R, "float32")
    blocks = max(1, gpu.cdiv(R * C, 256))
    gpu.launch("residual_sumsq", grid=blocks, block=256, args=(x, r, h, sumsq, R, C))
    gpu.launch("scale", grid=blocks, block=256, args=(h, sumsq, gamma, y, R, C, eps))
