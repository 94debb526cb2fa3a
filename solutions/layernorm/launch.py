"""Launch plan of the layernorm solution: one block per row, sized so the row fits in registers."""


def _pow2_at_least(n):
    p = 32
    while p < n:
        p *= 2
    return p


def launch(gpu, x, gamma, beta, y, mean, rstd, R, C, eps):
    args = (x, gamma, beta, y, mean, rstd, C, eps)
    if C % 4 == 0 and C <= 16 * 1024:
        # 16 floats (4 float4) per thread: C = 4096 gets 256 threads, so several rows share an SM
        # and one row's barriers hide behind another's loads.
        threads = min(1024, _pow2_at_least(gpu.cdiv(C, 16)))
        gpu.launch("layernorm_vec4x4", grid=R, block=threads, args=args)
    elif C <= 8 * 1024:
        threads = min(1024, _pow2_at_least(gpu.cdiv(C, 8)))
        gpu.launch("layernorm_regs8", grid=R, block=threads, args=args)
    else:
        gpu.launch("layernorm_welford", grid=R, block=1024, args=args)
