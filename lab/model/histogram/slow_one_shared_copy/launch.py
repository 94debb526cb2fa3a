"""4 blocks of 512 threads per SM, one shared copy of the bins each."""


def launch(gpu, samples, counts, n, bins):
    gpu.memset(counts, 0)
    blocks = max(1, min(gpu.cdiv(n, 512), gpu.device.sm_count * 4))
    gpu.launch("histogram", grid=blocks, block=512, shared=4 * bins, args=(samples, counts, n, bins))
