"""Default launch plan for the adamw stub: one 256-thread block per tensor (correct, not fast)."""


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    gpu.launch("adamw", grid=T, block=256, args=(p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t))
