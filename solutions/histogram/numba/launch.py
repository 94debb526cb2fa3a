"""Launch plan of the privatised numba histogram: zero the counts, per-warp copies of the bins as
many as fit, a grid of a few blocks per SM."""

THREADS = 512  # kernel.py's THREADS
WARPS = THREADS // 32


def launch(gpu, samples, counts, n, bins):
    # The blocks atomically add into counts, which is poisoned before every run.
    gpu.memset(counts, 0)
    # As many copies of the bins as fit in the 48 KB a block gets without opt-in, a power of two
    # so the copies divide the warps evenly: 16 at 256 bins, 2 at 4096.
    budget = gpu.device.max_shared_per_block // (4 * bins)
    copies = 1
    while copies * 2 <= min(WARPS, budget):
        copies *= 2
    # 4 blocks of 512 threads fill an SM; few blocks keep the flush (blocks x bins atomics) small.
    blocks = max(1, min(gpu.cdiv(n, THREADS * 8), gpu.device.sm_count * 4))
    gpu.launch("histogram", grid=blocks, block=THREADS, shared=4 * copies * bins,
               args=(samples, counts, n, bins, copies))
