"""Launch plan of the softmax solution: one block per row, sized so the row fits in registers."""


def _pow2_at_least(n):
    p = 32
    while p < n:
        p *= 2
    return p


def launch(gpu, x, y, R, C):
    # Registers first: 8 elements per thread up to 8192 columns (C = 1024 gets 128 threads, so
    # 16 blocks share an SM and hide each other's barriers), 32 per thread up to 32768.
    if C <= 8 * 1024:
        threads = min(1024, _pow2_at_least(gpu.cdiv(C, 8)))
        gpu.launch("softmax_regs8", grid=R, block=threads, args=(x, y, C))
    elif C <= 32 * 1024:
        threads = min(1024, _pow2_at_least(gpu.cdiv(C, 32)))
        gpu.launch("softmax_regs32", grid=R, block=threads, args=(x, y, C))
    else:
        gpu.launch("softmax_online", grid=R, block=1024, args=(x, y, C))
