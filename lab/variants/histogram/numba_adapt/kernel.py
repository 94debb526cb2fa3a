"""Histogram in numba.cuda, privatised like the numba solution (solutions/histogram/numba, once the numba_priv variant), but the block is sized to the copies
(launch.py): at most 2 warps share a copy, so at 4096 bins (2 copies of 16 KB) a block has 4 warps
and 6 blocks share an SM, where the solution puts 8 warps on each copy. The rest is the solution's:
each block keeps `copies` copies of the bins in dynamic shared memory, counts with shared atomics,
merges the copies and adds each non-zero bin to the global counts once.

What the first numba version lost against CUDA C (read from its PTX): one 4-byte load per loop
trip, whose shared atomic had to wait for it, so a thread had one load in flight; 64-bit index
arithmetic; and numba's wrap-around of negative indices (a shift, an and and an add on every
subscript with a signed index). Here each trip issues UNROLL coalesced loads (a warp reads 128
contiguous bytes per load, UNROLL of them in flight) before the first atomic, and every subscript
is a uint32, which numba neither wraps nor widens with a sign."""
from numba import cuda, uint32

UNROLL = 8  # loads in flight per thread per trip


@cuda.jit
def histogram(samples, counts, n, bins, copies):
    hist = cuda.shared.array(0, uint32)  # copies x bins words: the plan's shared= size
    t = uint32(cuda.threadIdx.x)
    threads = uint32(cuda.blockDim.x)  # copies divides its warps (launch.py)
    nbins = uint32(bins)
    words = uint32(copies) * nbins
    w = t
    while w < words:
        hist[w] = uint32(0)
        w += threads
    cuda.syncthreads()
    mine = ((t >> uint32(5)) % uint32(copies)) * nbins  # this warp's copy

    total = uint32(n)
    span = threads * uint32(UNROLL)
    stride = uint32(cuda.gridDim.x) * span
    base = uint32(cuda.blockIdx.x) * span
    # Whole trips: all UNROLL samples of every thread in range, no bounds check inside.
    while base + span <= total:
        v = cuda.local.array(UNROLL, uint32)
        for u in range(UNROLL):
            v[u] = uint32(samples[base + uint32(u) * threads + t])
        for u in range(UNROLL):
            cuda.atomic.add(hist, uint32(mine + v[u]), uint32(1))
        base += stride
    # The one partial trip of the grid (the tail of n), checked sample by sample.
    if base < total:
        for u in range(UNROLL):
            i = base + uint32(u) * threads + t
            if i < total:
                cuda.atomic.add(hist, uint32(mine + uint32(samples[i])), uint32(1))
    cuda.syncthreads()

    b = t
    while b < nbins:
        c = uint32(0)
        for k in range(copies):
            c += hist[uint32(k) * nbins + b]
        if c != uint32(0):
            cuda.atomic.add(counts, b, c)
        b += threads
