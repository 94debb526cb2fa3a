"""Histogram in numba.cuda: each block counts into its own copy of the bins in shared memory
(shared atomics are cheap and contend only within the block), then adds its non-zero bins into
the global counts with one atomic each."""
from numba import cuda, uint32

MAX_BINS = 4096  # the kata's largest bin count: 16 KiB of shared memory
THREADS = 256  # launch.py's block


@cuda.jit
def histogram(samples, counts, n, bins):
    local = cuda.shared.array(MAX_BINS, uint32)
    t = cuda.threadIdx.x
    for b in range(t, bins, THREADS):
        local[b] = 0
    cuda.syncthreads()
    i = cuda.grid(1)
    stride = cuda.gridsize(1)
    while i < n:
        cuda.atomic.add(local, samples[i], 1)
        i += stride
    cuda.syncthreads()
    for b in range(t, bins, THREADS):
        c = local[b]
        if c != 0:
            cuda.atomic.add(counts, b, c)
