"""256 threads per 128x128 tile of C; the float4 kernel when K and N are multiples of 4
(16-byte aligned rows; N % 8 == 0 for its paired float4 stores), else the scalar one."""


def launch(gpu, A, B, C, M, N, K):
    name = "matmul_vec" if K % 4 == 0 and N % 8 == 0 else "matmul_scalar"
    gpu.launch(name, grid=(gpu.cdiv(N, 128), gpu.cdiv(M, 128)), block=256, args=(A, B, C, M, N, K))
