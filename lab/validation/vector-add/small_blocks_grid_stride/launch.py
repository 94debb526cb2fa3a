"""Grid-stride, 32 threads per block, one block per SM."""


def launch(gpu, a, b, c, n):
    gpu.launch("vector_add", grid=gpu.device.sm_count, block=32, args=(a, b, c, n))
