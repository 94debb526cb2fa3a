"""Inclusive int32 prefix sum in numba.cuda by reduce-then-scan, the CUDA C solution's design:
12n bytes of traffic where the first numba version (scan tiles, scan totals, add offsets) moved
16n, and one long contiguous chunk per block so the carry between tiles stays in a register.

  scan_reduce      each block sums its chunk of x                    reads 4n bytes
  scan_chunk_sums  one block turns the chunk sums into offsets       negligible
  scan_downsweep   each block rescans its chunk, seeded by its offset  reads 4n, writes 4n

numba has no 16-byte vector loads, so the loads are made coalesced another way: warp w of a tile
owns 32 x ITEMS consecutive elements and its load u reads elements u*32 + lane, 128 contiguous
bytes per warp instruction, ITEMS of them in flight before the first add. Each of those rows is
scanned across the warp with shfl_up_sync (5 steps, the ITEMS rows independent of each other),
and the rows' totals chain in registers. The first version also did one element per thread, a
barrier per Hillis-Steele step (16 per 256 elements) and 64-bit wrap-around indexing.

All sums are uint32 (numba widens an int32 sum to int64; uint32(...) truncates it back), so the
arithmetic wraps modulo 2^32, the int32 wrap-around the kata asks for. The indices are truncated
the same way: with 64-bit indices ptxas gave scan_downsweep 62 registers (4 blocks of 256 per SM),
with uint32 ones 32, so the plan's 8 blocks per SM are one wave, as in the CUDA C solution."""
from numba import cuda, int32, uint32

THREADS = 256  # launch.py's THREADS
WARPS = THREADS // 32
ITEMS = 8  # coalesced loads per thread per tile
TILE = THREADS * ITEMS  # launch.py's TILE
FULL = 0xFFFFFFFF


@cuda.jit
def scan_reduce(x, sums, n, chunk):
    t = uint32(cuda.threadIdx.x)
    begin = uint32(cuda.blockIdx.x) * uint32(chunk)
    end = min(begin + uint32(chunk), uint32(n))
    acc = uint32(0)
    base = begin
    # Whole tiles: ITEMS loads per thread, all issued before the adds, no bounds checks.
    while base + uint32(TILE) <= end:
        v = cuda.local.array(ITEMS, uint32)
        for u in range(ITEMS):
            v[u] = uint32(x[base + uint32(u * THREADS) + t])
        for u in range(ITEMS):
            acc = uint32(acc + v[u])
        base += uint32(TILE)
    for u in range(ITEMS):  # the last chunk's partial tile
        i = base + uint32(u * THREADS) + t
        if i < end:
            acc = uint32(acc + uint32(x[i]))
    for d in (16, 8, 4, 2, 1):
        acc = uint32(acc + uint32(cuda.shfl_xor_sync(FULL, int32(acc), int32(d))))
    s = cuda.shared.array(WARPS, uint32)
    if t % uint32(32) == uint32(0):
        s[t // uint32(32)] = acc
    cuda.syncthreads()
    if t == uint32(0):
        total = uint32(0)
        for w in range(WARPS):
            total = uint32(total + s[w])
        sums[cuda.blockIdx.x] = total


@cuda.jit
def scan_chunk_sums(sums, count):
    # One block: exclusive scan of the chunk sums in place, THREADS at a time with a carry. Two
    # rounds of warp totals alternate, so a round is rewritten only after a barrier its readers passed.
    s = cuda.shared.array((2, WARPS), uint32)
    t = uint32(cuda.threadIdx.x)
    lane = t % uint32(32)
    warp = t // uint32(32)
    carry = uint32(0)
    r = 0
    base = uint32(0)
    while base < uint32(count):
        i = base + t
        v = uint32(sums[i]) if i < uint32(count) else uint32(0)
        incl = v
        for d in (1, 2, 4, 8, 16):
            up = uint32(cuda.shfl_up_sync(FULL, int32(incl), int32(d)))
            if lane >= uint32(d):
                incl = uint32(incl + up)
        if lane == uint32(31):
            s[r, warp] = incl
        cuda.syncthreads()
        before = uint32(0)
        total = uint32(0)
        for w in range(WARPS):
            wt = s[r, w]
            if uint32(w) < warp:
                before = uint32(before + wt)
            total = uint32(total + wt)
        if i < uint32(count):
            sums[i] = uint32(carry + before + incl - v)
        carry = uint32(carry + total)
        r = 1 - r
        base += uint32(THREADS)


@cuda.jit
def scan_downsweep(x, y, offsets, n, chunk):
    s = cuda.shared.array((2, WARPS), uint32)
    t = uint32(cuda.threadIdx.x)
    lane = t % uint32(32)
    warp = t // uint32(32)
    begin = uint32(uint32(cuda.blockIdx.x) * uint32(chunk))
    end = uint32(min(begin + uint32(chunk), uint32(n)))
    carry = uint32(offsets[cuda.blockIdx.x])  # everything before this chunk
    own = uint32(warp * uint32(32 * ITEMS) + lane)  # this thread's first element in a tile
    nxt = cuda.local.array(ITEMS, uint32)
    for u in range(ITEMS):
        i = uint32(begin + own + uint32(u * 32))
        nxt[u] = uint32(x[i]) if i < end else uint32(0)
    r = uint32(0)
    base = begin
    while base < end:
        v = cuda.local.array(ITEMS, uint32)
        for u in range(ITEMS):
            v[u] = nxt[u]
        # Prefetch the next tile before this one's shuffles and barrier.
        ahead = uint32(base + uint32(TILE))
        if ahead < end:
            for u in range(ITEMS):
                i = uint32(ahead + own + uint32(u * 32))
                nxt[u] = uint32(x[i]) if i < end else uint32(0)
        # Scan each row of 32 across the warp; the rows are independent until their totals chain.
        for u in range(ITEMS):
            for d in (1, 2, 4, 8, 16):
                up = uint32(cuda.shfl_up_sync(FULL, int32(v[u]), int32(d)))
                if lane >= uint32(d):
                    v[u] = uint32(v[u] + up)
        run = uint32(0)
        for u in range(ITEMS):
            row_total = uint32(cuda.shfl_sync(FULL, int32(v[u]), int32(31)))
            v[u] = uint32(v[u] + run)
            run = uint32(run + row_total)
        if lane == uint32(0):
            s[r, warp] = run
        cuda.syncthreads()
        before = carry
        total = uint32(0)
        for w in range(WARPS):
            wt = s[r, w]
            if uint32(w) < warp:
                before = uint32(before + wt)
            total = uint32(total + wt)
        carry = uint32(carry + total)
        for u in range(ITEMS):
            i = uint32(base + own + uint32(u * 32))
            if i < end:
                y[i] = v[u] + before
        r = uint32(r ^ uint32(1))
        base = ahead
