"""Launch plan of the vector-add solution: a grid the size of the GPU, one float4 per thread per step."""


def launch(gpu, a, b, c, n):
    threads = 256
    # 8 blocks of 256 threads fill an SM (2048 threads) and keep 2 x 16 bytes in flight per thread,
    # enough to cover DRAM latency; small n gets one thread per float4 so no block is idle.
    blocks = max(1, min(gpu.cdiv(n, threads * 4), gpu.device.sm_count * 8))
    gpu.launch("vector_add", grid=blocks, block=threads, args=(a, b, c, n))
