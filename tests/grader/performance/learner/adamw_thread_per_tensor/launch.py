def launch(gpu, p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t):
    gpu.launch("adamw", grid=gpu.cdiv(T, 256), block=256, args=(p, g, m, v, offsets, sizes, wd, T, N, lr, beta1, beta2, eps, t))
