"""Default launch plan for the qgemv stub: one thread per row, 128 threads per block."""


def launch(gpu, Wq, scales, x, y, N, K):
    threads = 128
    gpu.launch("qgemv", grid=gpu.cdiv(N, threads), block=threads, args=(Wq, scales, x, y, N, K))
