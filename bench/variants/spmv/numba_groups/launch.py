"""Launch plan of the lane-group numba spmv: lanes per row from the average row length / 4, then
the long rows' segments over the whole GPU."""

THREADS = 256  # kernel.py's THREADS
UNROLL, SEG = 4, 1024  # kernel.py's UNROLL and SEG
LONG = 4 * UNROLL


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    # A group about a quarter as wide as the average row (a power of two, 1..32): each lane then
    # has ~UNROLL non-zeros, all of whose loads it issues before the first add.
    lanes, shift = 1, 0
    while lanes < 32 and lanes * UNROLL < nnz / max(m, 1):
        lanes, shift = lanes * 2, shift + 1
    # Each long row (> LONG x lanes non-zeros) queues at most len/SEG + 1 segments.
    capacity = nnz // (LONG * lanes) + nnz // SEG + 1
    tasks = gpu.empty(2 * capacity, "int32")
    task_count = gpu.zeros(1, "int32")
    gpu.launch("spmv_rows", grid=gpu.cdiv(m * lanes, THREADS), block=THREADS,
               args=(row_ptr, col_idx, vals, x, y, m, lanes, shift, tasks, task_count))
    # Every warp of a full GPU (8 blocks of 8 warps per SM) works through the queue, or one warp
    # per segment the queue can hold where that is fewer (small matrices: the emulator's time).
    grid = max(1, min(gpu.device.sm_count * 8, gpu.cdiv(capacity, THREADS // 32)))
    gpu.launch("spmv_long", grid=grid, block=THREADS,
               args=(row_ptr, col_idx, vals, x, y, tasks, task_count))
