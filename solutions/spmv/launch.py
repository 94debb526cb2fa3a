"""Launch plan of the spmv solution: lanes per row from the average row length, then long rows."""

THREADS = 256
SEG = 1024  # must match kernel.cu


def launch(gpu, row_ptr, col_idx, vals, x, y, m, nnz, k):
    # A group as wide as the average row (a power of two, 1..32): narrower wastes no lanes on
    # short rows, wider would leave most lanes of a group idle.
    lanes = 1
    while lanes < 32 and lanes < nnz / max(m, 1):
        lanes *= 2
    # Each long row (> 16 x lanes non-zeros) queues at most len/SEG + 1 segments.
    capacity = nnz // (16 * lanes) + nnz // SEG + 1
    tasks = gpu.empty(2 * capacity, "int32")
    task_count = gpu.zeros(1, "int32")
    gpu.launch("spmv_rows", grid=gpu.cdiv(m * lanes, THREADS), block=THREADS,
               args=(row_ptr, col_idx, vals, x, y, m, lanes, tasks, task_count))
    # Every warp of a full GPU (8 blocks of 8 warps per SM) works through the queue.
    gpu.launch("spmv_long", grid=gpu.device.sm_count * 8, block=THREADS,
               args=(row_ptr, col_idx, vals, x, y, tasks, task_count))
