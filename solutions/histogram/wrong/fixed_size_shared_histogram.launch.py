"""The plan for a kernel with a static 256-bin shared histogram: no dynamic shared memory."""


def launch(gpu, samples, counts, n, bins):
    threads = 512
    gpu.memset(counts, 0)
    blocks = max(1, min(gpu.cdiv(n, threads * 4), gpu.device.sm_count * 4))
    gpu.launch("histogram", grid=blocks, block=threads, args=(samples, counts, n, bins, 1))
