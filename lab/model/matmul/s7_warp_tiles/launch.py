"""256 threads (8 warps of 64x32) per 128x128 tile of C; the scalar 2-D kernel unless K and N are
multiples of 4."""


def launch(gpu, A, B, C, M, N, K):
    name = "matmul_warp" if K % 4 == 0 and N % 4 == 0 else "matmul_scalar"
    gpu.launch(name, grid=(gpu.cdiv(N, 128), gpu.cdiv(M, 128)), block=256, args=(A, B, C, M, N, K))
