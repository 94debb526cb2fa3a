"""Default launch plan for the fp8-gemm stub: one thread per element of C, 16×16 threads per block."""


def launch(gpu, A, As, B, Bs, C, M, N, K):
    tile = 16
    # x runs along the columns of C (consecutive threads, consecutive addresses), y along the rows.
    gpu.launch("fp8_gemm", grid=(gpu.cdiv(N, tile), gpu.cdiv(M, tile)), block=(tile, tile),
               args=(A, As, B, Bs, C, M, N, K))
