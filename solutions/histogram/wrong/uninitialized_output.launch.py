"""The solution's plan without the memset: counts keeps whatever was in memory before the kernel."""

THREADS = 512
WARPS = THREADS // 32


def launch(gpu, samples, counts, n, bins):
    budget = gpu.device.max_shared_per_block // (4 * bins)
    copies = 1
    while copies * 2 <= min(WARPS, budget):
        copies *= 2
    blocks = max(1, min(gpu.cdiv(n, THREADS * 4), gpu.device.sm_count * 4))
    gpu.launch("histogram", grid=blocks, block=THREADS, shared=4 * copies * bins,
               args=(samples, counts, n, bins, copies))
