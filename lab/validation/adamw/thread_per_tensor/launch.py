"""One thread per tensor, 128 per block."""


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    gpu.launch("adamw", grid=gpu.cdiv(T, 128), block=128, args=(p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t))
