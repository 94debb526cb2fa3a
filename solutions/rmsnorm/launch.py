"""Launch plan of the rmsnorm solution: the float4 register kernel when rows allow it, else any C."""

VEC = 8  # float4s of h held per thread by rmsnorm_vec (kernel.cu)


def _threads(work: int, gpu) -> int:
    # Whole warps (a warp never spans two rows), enough that no thread holds more than VEC items.
    per_row = gpu.cdiv(work, VEC)
    return min(1024, max(32, 32 * gpu.cdiv(per_row, 32)))


def launch(gpu, x, r, gamma, h, y, R, C, eps):
    vec = C % 4 == 0 and C // 4 <= VEC * 1024
    threads = _threads(C // 4 if vec else C, gpu)
    # Several rows per block when a row needs fewer than 256 threads, so short rows fill the SM.
    rows = max(1, min(32, 256 // threads))
    grid = gpu.cdiv(R, rows)
    gpu.launch("rmsnorm_vec" if vec else "rmsnorm_any", grid=grid, block=(threads, rows),
               args=(x, r, gamma, h, y, R, C, eps))
