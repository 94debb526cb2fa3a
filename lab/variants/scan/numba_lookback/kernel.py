"""Inclusive int32 prefix sum in numba.cuda in one pass, by decoupled look-back (Merrill &
Garland, 2016), the design of lab/variants/scan/lookback: x read once and y written once, 8n
bytes, where reduce-then-scan reads x twice (12n).

Each block takes the next tile id from an atomic counter (so every tile it waits for belongs to
a block already running), scans its 4096 elements and learns the sum of all before it from the
status words of the tiles before it: flag 0 nothing yet (the plan zeroes them), 1 AGGREGATE (the
tile's own sum, published before the tile waits on anyone), 2 INCLUSIVE (everything up to the
tile's end). Flag and value share one 64-bit word, so a reader never sees a flag without its
value. numba has no volatile loads: status words are read with an atomic add of 0 and written
with an atomic exchange, both resolved in L2, so a spinning reader sees the writer's word.

Layout: warp w owns 512 consecutive elements of the tile; load u of a lane reads element
u*32 + lane (128 contiguous bytes per warp instruction, ITEMS loads in flight), each row of 32
is scanned with 5 shfl_up_sync, the rows independently, and the row totals chain in registers.
All sums are uint32, so they wrap modulo 2^32, the int32 wrap-around the kata asks for; indices
are truncated to uint32 too (numba widens sums to 64 bits), which keeps the kernel at 32 registers,
8 blocks of 256 per SM (64-bit indices: 40 registers, 6 blocks)."""
from numba import cuda, int32, uint32, uint64

THREADS = 256
WARPS = THREADS // 32
ITEMS = 16  # rows of 32 per warp
WARP_ITEMS = 32 * ITEMS
TILE = WARPS * WARP_ITEMS  # launch.py's TILE
FULL = 0xFFFFFFFF
AGGREGATE = 1 << 32
INCLUSIVE = 2 << 32


@cuda.jit
def scan_lookback(x, y, status, counter, n):
    s_tile = cuda.shared.array(1, uint32)
    s_warp = cuda.shared.array(WARPS, uint32)  # warp totals, then each warp's exclusive prefix
    t = uint32(cuda.threadIdx.x)
    lane = t & uint32(31)
    warp = t >> uint32(5)
    if t == uint32(0):
        s_tile[0] = uint32(cuda.atomic.add(counter, 0, uint64(1)))
    cuda.syncthreads()
    tile = s_tile[0]
    total = uint32(n)
    first = uint32(tile * uint32(TILE))
    base = uint32(first + warp * uint32(WARP_ITEMS) + lane)
    whole = first + uint32(TILE) <= total  # no bounds checks but in the last tile

    v = cuda.local.array(ITEMS, uint32)
    if whole:
        for u in range(ITEMS):
            v[u] = uint32(x[uint32(base + uint32(u * 32))])
    else:
        for u in range(ITEMS):
            i = uint32(base + uint32(u * 32))
            v[u] = uint32(x[i]) if i < total else uint32(0)
    for d in (1, 2, 4, 8, 16):
        for u in range(ITEMS):  # ITEMS independent shuffles in flight per step
            up = uint32(cuda.shfl_up_sync(FULL, int32(v[u]), int32(d)))
            if lane >= uint32(d):
                v[u] = uint32(v[u] + up)
    run = uint32(0)
    for u in range(ITEMS):
        row_total = uint32(cuda.shfl_sync(FULL, int32(v[u]), int32(31)))
        v[u] = uint32(v[u] + run)
        run = uint32(run + row_total)
    if lane == uint32(0):
        s_warp[warp] = run
    cuda.syncthreads()

    if warp == uint32(0):
        w = s_warp[lane] if lane < uint32(WARPS) else uint32(0)
        wincl = w
        for d in (1, 2, 4, 8, 16):
            up = uint32(cuda.shfl_up_sync(FULL, int32(wincl), int32(d)))
            if lane >= uint32(d):
                wincl = uint32(wincl + up)
        aggregate = uint32(cuda.shfl_sync(FULL, int32(wincl), int32(WARPS - 1)))
        exclusive = uint32(0)
        if tile == uint32(0):
            if lane == uint32(0):
                cuda.atomic.exch(status, 0, uint64(INCLUSIVE) | uint64(aggregate))
        else:
            # Publish this tile's own sum before waiting, so successors can skip over it.
            if lane == uint32(0):
                cuda.atomic.exch(status, tile, uint64(AGGREGATE) | uint64(aggregate))
            # Lane i inspects tile - 1 - i; once all 32 have news, add the aggregates up to and
            # including the nearest INCLUSIVE, or all 32 and move the window back.
            pred = int32(tile) - int32(1) - int32(lane)
            while True:
                s = uint64(INCLUSIVE)  # before tile 0: an INCLUSIVE of 0 ends the walk
                while True:
                    if pred >= 0:
                        s = uint64(cuda.atomic.add(status, uint32(pred), uint64(0)))
                    if not cuda.any_sync(FULL, (s >> uint64(32)) == uint64(0)):
                        break
                done = uint32(cuda.ballot_sync(FULL, (s >> uint64(32)) == uint64(2)))
                stop = uint32(31)
                if done != uint32(0):
                    stop = uint32(cuda.popc(uint32(done ^ uint32(done - uint32(1))))) - uint32(1)
                part = uint32(s & uint64(0xFFFFFFFF)) if lane <= stop else uint32(0)
                for d in (16, 8, 4, 2, 1):
                    part = uint32(part + uint32(cuda.shfl_xor_sync(FULL, int32(part), int32(d))))
                exclusive = uint32(exclusive + part)
                if done != uint32(0):
                    break
                pred -= int32(32)
            if lane == uint32(0):
                cuda.atomic.exch(status, tile, uint64(INCLUSIVE) | uint64(uint32(exclusive + aggregate)))
        if lane < uint32(WARPS):
            s_warp[lane] = uint32(exclusive + wincl - w)
    cuda.syncthreads()

    before = s_warp[warp]
    if whole:
        for u in range(ITEMS):
            y[uint32(base + uint32(u * 32))] = v[u] + before
    else:
        for u in range(ITEMS):
            i = uint32(base + uint32(u * 32))
            if i < total:
                y[i] = v[u] + before
