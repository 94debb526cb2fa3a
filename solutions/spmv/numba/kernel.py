"""CSR sparse matrix-vector product in numba.cuda, one warp per row: the lanes stride over the
row's non-zeros (consecutive lanes, consecutive col_idx and vals: coalesced), then a shuffle tree
sums the 32 partials and lane 0 writes y[row] (0 for an empty row)."""
from numba import cuda, float32

WARPS = 8  # warps per block: launch.py's block is 32 * WARPS


@cuda.jit
def spmv(row_ptr, col_idx, vals, x, y, m):
    lane = cuda.threadIdx.x % 32
    row = cuda.blockIdx.x * WARPS + cuda.threadIdx.x // 32
    if row >= m:
        return
    acc = float32(0.0)
    for j in range(row_ptr[row] + lane, row_ptr[row + 1], 32):
        acc += vals[j] * x[col_idx[j]]
    offset = 16
    while offset > 0:
        acc += cuda.shfl_down_sync(0xFFFFFFFF, acc, offset)
        offset //= 2
    if lane == 0:
        y[row] = acc
