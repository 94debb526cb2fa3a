"""Default launch plan for the layernorm-backward stub: zero dgamma and dbeta (the stub's atomics
add into them), then one 256-thread block per row."""


def launch(gpu, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C):
    gpu.memset(dgamma, 0)
    gpu.memset(dbeta, 0)
    gpu.launch("layernorm_backward", grid=R, block=256, args=(dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C))
