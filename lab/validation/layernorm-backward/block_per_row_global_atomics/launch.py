"""One 256-thread block per row, global atomics for dgamma and dbeta."""


def launch(gpu, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C):
    gpu.memset(dgamma, 0)
    gpu.memset(dbeta, 0)
    gpu.launch("layernorm_backward", grid=R, block=256, args=(dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C))
