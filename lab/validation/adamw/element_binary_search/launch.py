"""One thread per arena element, 256 per block."""


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    gpu.launch("adamw", grid=max(1, gpu.cdiv(N, 256)), block=256, args=(p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t))
