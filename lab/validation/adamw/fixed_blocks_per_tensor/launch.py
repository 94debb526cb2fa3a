"""32 blocks of 256 threads per tensor."""


def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    gpu.launch("adamw", grid=(32, T), block=256, args=(p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t))
