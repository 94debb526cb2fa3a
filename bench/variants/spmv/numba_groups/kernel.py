"""CSR SpMV y = A x in numba.cuda, the CUDA C solution's design: narrow lane groups with several
gathers in flight per lane, and long rows split into segments that the whole GPU shares.

The first numba version gave every row a whole warp: at 16 non-zeros a row, half the lanes
idled, each busy lane had one (col, val) load and then one gather of x in flight behind the
row_ptr load, and 5 shuffles summed 32 partials of which 16 were zero. On the power-law matrix a
warp walked a row of a million non-zeros alone while the rest of the GPU sat idle.

  spmv_rows  a group of `lanes` threads per row (the plan: about a quarter of the average row),
             each lane issuing UNROLL (col, val) loads and then UNROLL gathers of x before its
             first add. Rows longer than LONG x lanes are queued as SEG-sized segments; the
             queue's scan and atomic run only in a warp that has such a row (one ballot decides).
  spmv_long  one warp per queued segment over the whole GPU, partial sums meeting in y[row]
             through atomic adds. On a regular matrix the queue is empty and every warp exits.

Subscripts are uint32 so numba emits no wrap-around of negative indices, and the loop indices are
truncated back to uint32 (numba widens a uint32 sum to 64 bits): that keeps spmv_rows at 32
registers, 8 blocks of 256 per SM, where 64-bit indices took 34 (6 blocks)."""
from numba import cuda, float32, int32, uint32

THREADS = 256  # launch.py's THREADS
UNROLL = 4  # launch.py's UNROLL
LONG = 4 * UNROLL  # a row is long past LONG non-zeros per lane of its group
SEG = 1024  # launch.py's SEG: non-zeros per queued segment
FULL = 0xFFFFFFFF


@cuda.jit
def spmv_rows(row_ptr, col_idx, vals, x, y, m, lanes, shift, tasks, task_count):
    tid = uint32(cuda.threadIdx.x)
    gid = uint32(cuda.blockIdx.x) * uint32(THREADS) + tid
    row = gid >> uint32(shift)  # lanes = 2^shift, so groups never straddle a warp
    width = uint32(lanes)
    lane = gid & (width - uint32(1))
    warp_lane = tid & uint32(31)
    # The group's lanes: its shuffles name only them, because other groups of the warp leave early.
    group = uint32(FULL)
    if width < uint32(32):
        group = uint32(((uint32(1) << width) - uint32(1)) << (warp_lane & ~(width - uint32(1))))
    begin = int32(0)
    end = int32(0)
    if row < uint32(m):
        begin = row_ptr[row]
        end = row_ptr[row + uint32(1)]
    is_long = end - begin > LONG * lanes

    # Every lane of the warp is still here, so full-warp votes and shuffles are safe.
    if cuda.ballot_sync(FULL, is_long) != 0:
        # Queue the long rows' segments: a warp scan of the segment counts gives each row its
        # slots, and one atomic per warp reserves them (one per row would serialise in L2).
        nseg = int32(0)
        if is_long and lane == uint32(0):
            nseg = int32((end - begin + SEG - 1) // SEG)
        incl = nseg
        for d in (1, 2, 4, 8, 16):
            up = cuda.shfl_up_sync(FULL, incl, int32(d))
            if warp_lane >= uint32(d):
                incl = int32(incl + up)
        warp_total = cuda.shfl_sync(FULL, incl, int32(31))
        base = int32(0)
        if warp_lane == uint32(31):
            base = cuda.atomic.add(task_count, 0, warp_total)
        base = int32(cuda.shfl_sync(FULL, base, int32(31)) + incl - nseg)
        if nseg > 0:
            y[row] = float32(0.0)  # spmv_long adds into it
            for s in range(nseg):
                tasks[uint32(2 * (base + s))] = int32(row)
                tasks[uint32(2 * (base + s) + 1)] = int32(s)
    if row >= uint32(m) or is_long:
        return  # whole groups leave together

    acc = float32(0.0)
    j = uint32(uint32(begin) + lane)
    stop = uint32(end)
    step = uint32(uint32(UNROLL) * width)
    while j < stop:
        c = cuda.local.array(UNROLL, int32)
        v = cuda.local.array(UNROLL, float32)
        for u in range(UNROLL):
            i = uint32(j + uint32(u) * width)
            c[u] = col_idx[i] if i < stop else int32(-1)
            v[u] = vals[i] if i < stop else float32(0.0)
        for u in range(UNROLL):
            if c[u] >= 0:
                acc += v[u] * x[uint32(c[u])]
        j = uint32(j + step)
    off = width >> uint32(1)
    while off > uint32(0):
        acc += cuda.shfl_xor_sync(group, acc, int32(off))
        off >>= uint32(1)
    if lane == uint32(0):
        y[row] = acc  # empty rows write 0 too


@cuda.jit
def spmv_long(row_ptr, col_idx, vals, x, y, tasks, task_count):
    count = uint32(task_count[0])
    tid = uint32(cuda.threadIdx.x)
    lane = tid & uint32(31)
    warps = uint32(cuda.gridDim.x) * uint32(THREADS // 32)
    # The grid is sized to the GPU, not to the queue (whose length only the device knows).
    t = uint32(cuda.blockIdx.x) * uint32(THREADS // 32) + (tid >> uint32(5))
    while t < count:
        row = uint32(tasks[uint32(2) * t])
        first = uint32(row_ptr[row]) + uint32(tasks[uint32(2) * t + uint32(1)]) * uint32(SEG)
        stop = min(first + uint32(SEG), uint32(row_ptr[row + uint32(1)]))
        acc = float32(0.0)
        j = uint32(first + lane)
        while j < stop:
            c = cuda.local.array(UNROLL, int32)
            v = cuda.local.array(UNROLL, float32)
            for u in range(UNROLL):
                i = uint32(j + uint32(u * 32))
                c[u] = col_idx[i] if i < stop else int32(-1)
                v[u] = vals[i] if i < stop else float32(0.0)
            for u in range(UNROLL):
                if c[u] >= 0:
                    acc += v[u] * x[uint32(c[u])]
            j = uint32(j + uint32(UNROLL * 32))
        for d in (16, 8, 4, 2, 1):
            acc += cuda.shfl_xor_sync(FULL, acc, int32(d))
        if lane == uint32(0):
            cuda.atomic.add(y, row, acc)
        t += warps
