# Inclusive prefix sum of n int32 values (wrapping on overflow), in numba.cuda. `kata grade`
# compiles this file with numba.cuda.compile_ptx for the H200 (sm_90). launch.py scans tiles of
# THREADS elements, then the tile totals (the same plan, one level up), then adds the carries.
from numba import cuda, int32

THREADS = 256  # launch.py's BLOCK


@cuda.jit
def scan_tiles(x, y, sums, n):
    buf = cuda.shared.array(THREADS, int32)
    # TODO: scan this block's tile of x into y (in shared memory, cuda.syncthreads() between steps).
    # TODO: the tile's total into sums[cuda.blockIdx.x].
    pass


@cuda.jit
def add_offsets(y, sums, n):
    # TODO: add the total of the tiles before this one (the scanned sums) to this tile of y.
    pass
