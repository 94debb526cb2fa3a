"""One thread per sample, 256 per block."""


def launch(gpu, samples, counts, n, bins):
    gpu.memset(counts, 0)
    gpu.launch("histogram", grid=gpu.cdiv(n, 256), block=256, args=(samples, counts, n, bins))
