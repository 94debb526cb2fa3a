"""The solution's plan without the memset: out keeps whatever was in memory before the kernel."""


def launch(gpu, x, out, n):
    threads = 256
    blocks = max(1, min(gpu.cdiv(n, threads * 4), gpu.device.sm_count * 8))
    gpu.launch("reduce", grid=blocks, block=threads, args=(x, out, n))
