"""Launch plan of the Triton reduce solution: a few programs per SM, BLOCK floats per step."""


def launch(gpu, x, out, n):
    BLOCK = 2048
    # The programs atomically add into out, which is poisoned with NaN before every run.
    gpu.memset(out, 0)
    grid = max(1, min(gpu.cdiv(n, BLOCK), gpu.device.sm_count * 4))
    gpu.launch("reduce", grid=grid, args=(x, out, n), num_warps=8, num_stages=1, constexprs=dict(BLOCK=BLOCK))
