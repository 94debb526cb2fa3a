"""Launch plan of the matmul solution: one 256-thread block per 128×128 tile of C."""


def launch(gpu, A, B, C, M, N, K):
    # Each thread owns 8×8 outputs; the kernel is written for exactly 256 threads per block.
    gpu.launch("matmul", grid=(gpu.cdiv(N, 128), gpu.cdiv(M, 128)), block=256, args=(A, B, C, M, N, K))
