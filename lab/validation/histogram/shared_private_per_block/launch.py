"""One thread per sample, 256 per block, a shared histogram per block."""


def launch(gpu, samples, counts, n, bins):
    gpu.memset(counts, 0)
    gpu.launch("histogram", grid=gpu.cdiv(n, 256), block=256, shared=4 * bins, args=(samples, counts, n, bins))
