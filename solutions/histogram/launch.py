"""Launch plan of the histogram solution: zero counts, one privatised launch sized to the GPU."""

THREADS = 512
WARPS = THREADS // 32  # must match kernel.cu


def launch(gpu, samples, counts, n, bins):
    # The blocks atomically add into counts, which is poisoned before every run.
    gpu.memset(counts, 0)
    # As many per-warp copies of the bins as fit in the 48 KB a block gets without opt-in, rounded
    # down to a power of two so the copies divide the warps evenly.
    budget = gpu.device.max_shared_per_block // (4 * bins)
    copies = 1
    while copies * 2 <= min(WARPS, budget):
        copies *= 2
    # 4 blocks of 512 threads fill an SM. Few blocks keep the flush (blocks x bins atomics) small.
    blocks = max(1, min(gpu.cdiv(n, THREADS * 4), gpu.device.sm_count * 4))
    gpu.launch("histogram", grid=blocks, block=THREADS, shared=4 * copies * bins,
               args=(samples, counts, n, bins, copies))
