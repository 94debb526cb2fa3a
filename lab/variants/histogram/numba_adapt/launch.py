"""Launch plan of the adaptive numba histogram: zero the counts, then as many copies of the bins
as fit in a block's 48 KB, at most 2 warps per copy, and as many blocks as fit an SM."""


def launch(gpu, samples, counts, n, bins):
    # The blocks atomically add into counts, which is poisoned before every run.
    gpu.memset(counts, 0)
    # Copies: a power of two, at most 16, that fits in the 48 KB a block gets without opt-in:
    # 16 at 256 bins, 2 at 4096. At most two warps per copy and 16 warps a block: 512 threads
    # (a copy per warp) at 256 bins, 128 threads at 4096.
    budget = gpu.device.max_shared_per_block // (4 * bins)
    copies = 1
    while copies * 2 <= min(16, budget):
        copies *= 2
    threads = min(512, 64 * copies)
    shared = 4 * copies * bins
    # Blocks per SM: as many as the threads and the shared memory allow (1 KB of each SM's shared
    # memory is the driver's), so the flush (blocks x bins atomics) stays one wave's worth.
    per_sm = min(gpu.device.max_threads_per_sm // threads, (gpu.device.shared_per_sm - 1024) // (shared + 1024), 32)
    blocks = max(1, min(gpu.cdiv(n, threads * 8), gpu.device.sm_count * max(1, per_sm)))
    gpu.launch("histogram", grid=blocks, block=threads, shared=shared,
               args=(samples, counts, n, bins, copies))
