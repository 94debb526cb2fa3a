"""A grid the size of the GPU, one global atomic per sample."""


def launch(gpu, samples, counts, n, bins):
    gpu.memset(counts, 0)
    blocks = max(1, min(gpu.cdiv(n, 256), gpu.device.sm_count * 8))
    gpu.launch("histogram", grid=blocks, block=256, args=(samples, counts, n, bins))
