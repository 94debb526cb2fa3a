"""Launch plan of the numba histogram solution: zero the counts, a grid the size of the GPU."""


def launch(gpu, samples, counts, n, bins):
    threads = 256  # kernel.py's THREADS
    # counts is poisoned before every run, and the blocks add into it.
    gpu.memset(counts, 0)
    blocks = max(1, min(gpu.cdiv(n, threads * 8), gpu.device.sm_count * 4))
    gpu.launch("histogram", grid=blocks, block=threads, args=(samples, counts, n, bins))
