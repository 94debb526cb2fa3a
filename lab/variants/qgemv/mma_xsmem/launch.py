"""Launch plan of the x-in-shared qgemv variant: the solution's grid, plus 256 bytes of shared memory
per group of 128 along K for the staged x pairs."""


def launch(gpu, Wq, scales, x, y, N, K):
    gpu.launch("qgemv", grid=gpu.cdiv(N, 16), block=256, shared=256 * ((K + 127) // 128),
               args=(Wq, scales, x, y, N, K))
