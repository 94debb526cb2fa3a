# Count n int32 samples (each in [0, bins)) into counts[bins] (uint32), in numba.cuda. `kata grade`
# compiles this file with numba.cuda.compile_ptx for the H200 (sm_90).
from numba import cuda, uint32

MAX_BINS = 4096  # the largest bin count
THREADS = 256  # threads per block: launch.py's block


@cuda.jit
def histogram(samples, counts, n, bins):
    # TODO: each thread counts its share of the samples (a grid-stride loop, cuda.atomic.add).
    # TODO: for speed, count into a per-block copy first (cuda.shared.array(MAX_BINS, uint32), zeroed,
    #       cuda.syncthreads() around the counting) and add its non-zero bins into counts.
    pass
