"""A warp per row, 256-thread blocks; dgamma and dbeta zeroed, then accumulated by atomics."""


def launch(gpu, dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C):
    gpu.memset(dgamma, 0)
    gpu.memset(dbeta, 0)
    gpu.launch("layernorm_backward", grid=gpu.cdiv(R, 8), block=256,
               args=(dy, x, mean, rstd, gamma, dx, dgamma, dbeta, R, C))
