"""Inclusive int32 prefix sum in numba.cuda, in three kernels per level (see launch.py):
scan_tiles scans each tile of THREADS elements in shared memory (Hillis-Steele: log2(THREADS)
steps, a barrier between each step's reads and its writes) and saves the tile's total;
the totals are scanned by the same plan one level up; add_offsets adds each tile's carry-in.
numba adds int32 values as int64, and the store to an int32 array keeps the low 32 bits: the
wrap-around the kata asks for."""
from numba import cuda, int32

THREADS = 256  # launch.py's BLOCK


@cuda.jit
def scan_tiles(x, y, sums, n):
    buf = cuda.shared.array(THREADS, int32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * THREADS + t
    buf[t] = x[i] if i < n else 0
    cuda.syncthreads()
    offset = 1
    while offset < THREADS:
        add = buf[t - offset] if t >= offset else 0
        cuda.syncthreads()
        buf[t] += add
        cuda.syncthreads()
        offset *= 2
    if i < n:
        y[i] = buf[t]
    if t == THREADS - 1:
        sums[cuda.blockIdx.x] = buf[t]


@cuda.jit
def add_offsets(y, sums, n):
    b = cuda.blockIdx.x
    i = b * THREADS + cuda.threadIdx.x
    if b > 0 and i < n:
        y[i] += sums[b - 1]
