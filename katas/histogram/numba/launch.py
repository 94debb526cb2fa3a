"""Default launch plan for the numba histogram stub: zero the counts, then one launch."""


def launch(gpu, samples, counts, n, bins):
    threads = 256  # kernel.py's THREADS
    # counts is poisoned before every run, and the kernel adds into it.
    gpu.memset(counts, 0)
    blocks = max(1, min(gpu.cdiv(n, threads), gpu.device.sm_count * 8))
    gpu.launch("histogram", grid=blocks, block=threads, args=(samples, counts, n, bins))
