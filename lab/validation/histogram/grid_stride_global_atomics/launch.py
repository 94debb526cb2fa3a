"""Grid-stride, 8 blocks of 256 per SM."""


def launch(gpu, samples, counts, n, bins):
    gpu.memset(counts, 0)
    blocks = max(1, min(gpu.cdiv(n, 256), gpu.device.sm_count * 8))
    gpu.launch("histogram", grid=blocks, block=256, args=(samples, counts, n, bins))
