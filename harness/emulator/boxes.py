"""Lane sets shaped like a rectangle: a run of resident blocks times a run of thread ids.

Divergence in interview kernels is nearly always on the thread id (`if (tid < stride)`), so a
partial group is usually the same tids in every block: lanes {slot*T + t : s0 <= slot < s1,
t0 <= t < t1}. Indexing a register with those lanes as an index array costs a gather per read
and a scatter per write (~3 ns a lane); seen as an (R, T) array the same lanes are the basic
slice [s0:s1, t0:t1], a strided view (~0.3 ns a lane). So the engine binds every instruction a
second time against a copy of the launch state whose per-lane arrays are (R, T) views of the same
memory, and runs it with the 2-D slice when the group is such a box.

Only instructions that touch their own lanes elementwise are bound this way (BOX_OPS); ufunc
ones compute straight into the destination register (ops.into). Memory accesses whose addresses
are affine in (block, tid), like s[tid] or x[blockIdx.x * blockDim.x + tid], become strided views
of memory; others gather. Either way they take the box path only when every lane is in bounds and
aligned, else they return FALLBACK and the engine runs the 1-D version, which reports the finding.
A branch on the thread id splits a box into Pending sets that are written out as index arrays
only when needed. Observers see lanes as 1-D arrays, so box runs are used only without observers.
"""
from __future__ import annotations

import bisect
import copy

import numpy as np

from .findings import UnsupportedPTX
from .memory import GLOBAL_BASE
from .ops import BUILDERS, NP, PLAIN, get, put, types_of
from .ops_mem import address, space_of, vec_of

FALLBACK = True  # what a box run returns when it did nothing: run the 1-D version instead

# Opcodes whose run(sel) only reads and writes the lanes sel, elementwise, through get/put (or,
# for ld/st, through the box path in ops_mem), so a 2-D sel on (R, T) arrays computes the same.
BOX_OPS = frozenset((
    "add", "sub", "mul", "mad", "div", "rem", "min", "max", "abs", "neg", "fma", "sad",
    "and", "or", "xor", "not", "cnot", "shl", "shr", "setp", "set", "selp", "slct",
    "mov", "cvt", "cvta", "isspacep", "shf", "popc", "clz", "brev", "bfind", "bfe", "bfi", "prmt",
    "lop3", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "copysign", "testp",
    "ld", "ldu", "st"))
_CLOCKS = ("%clock", "%clock64", "%globaltimer", "%smid")  # each read moves time, or depends on the block
BOX_MIN = 1024  # lanes below which a gather is as quick as looking for a box shape
# Launches with fewer lanes never use box runs: binding the second set of closures (~15 us an
# instruction) costs more than boxes save when each instruction runs over a few thousand lanes.
LAUNCH_MIN = 1 << 15


def box_of(idx: np.ndarray, T: int):
    """(slice of slots, slice of tids) when the sorted, duplicate-free lanes idx are exactly a
    rectangle of at least two slots, else None. O(slots): the rows' first and last lanes decide,
    because a row of w sorted distinct lanes from r*T+t0 to r*T+t0+w-1 can only be that range."""
    n = idx.size
    a, b = int(idx[0]), int(idx[n - 1])
    s0, t0 = divmod(a, T)
    s1, t1 = divmod(b, T)
    w, rows = t1 - t0 + 1, s1 - s0 + 1
    if w <= 0 or rows < 2 or rows * w != n:
        return None
    m = idx.reshape(rows, w)
    first = np.arange(a, s1 * T + t0 + 1, T)
    if not (np.array_equal(m[:, 0], first) and np.array_equal(m[:, w - 1], first + (w - 1))):
        return None
    return (slice(s0, s1 + 1), slice(t0, t1 + 1))


def lanes_of(eng, idx: np.ndarray):
    """How run() indexes the lanes idx (a slice when contiguous, else idx) and, when they form
    a box and box runs are on, the 2-D slice of that box (whole blocks are a box of full rows,
    which the memory paths want)."""
    sel = idx
    n = idx.size
    a = int(idx[0])
    if int(idx[n - 1]) - a == n - 1:
        sel = slice(a, a + n)
    if not eng.boxed or n < BOX_MIN:
        return sel, None
    T = eng.T
    if sel is idx:
        return sel, box_of(idx, T)
    if sel.start % T == 0 and sel.stop % T == 0:
        return sel, (slice(sel.start // T, sel.stop // T), slice(0, T))
    return sel, None


class Pending:
    """Lanes {start + col : start in starts, col in cols} not yet written out as an index array.
    The sides of a branch on the thread id wait in the engine's runnable table like this: one of
    them usually only waits to be merged back into a contiguous range (the join after `if (tid <
    stride)`), which needs its first and last lane and its size, never the array."""
    __slots__ = ("starts", "cols", "size")

    def __init__(self, starts: np.ndarray, cols: np.ndarray):
        self.starts, self.cols, self.size = starts, cols, starts.size * cols.size

    def lanes(self) -> np.ndarray:
        return (self.starts[:, None] + self.cols).ravel()


def first(lanes) -> int:
    return int(lanes.starts[0] + lanes.cols[0]) if type(lanes) is Pending else int(lanes[0])


def last(lanes) -> int:
    return int(lanes.starts[-1] + lanes.cols[-1]) if type(lanes) is Pending else int(lanes[-1])


def written(lanes) -> np.ndarray:
    """The index array of lanes, writing out a Pending set."""
    return lanes.lanes() if type(lanes) is Pending else lanes


def split(eng, idx: np.ndarray, m: np.ndarray, box):
    """(idx[m], idx[~m]), sorted lane sets. When idx is a box and every block's row of m is the
    same (a branch on the thread id), both sides are Pending sets of the rows' first lanes plus
    the row's columns, which beats compressing the whole index array twice."""
    if box is not None:
        rows, tids = box
        m2 = m.reshape(rows.stop - rows.start, tids.stop - tids.start)
        r0 = m2[0]
        if (m2 == r0).all():
            T = eng.T
            starts = eng.every[rows.start * T + tids.start: rows.stop * T: T]
            return Pending(starts, np.flatnonzero(r0)), Pending(starts, np.flatnonzero(~r0))
    return idx[m], idx[~m]


def rows_view(eng):
    """A copy of the launch state whose per-lane arrays are (R, T) views of the same memory."""
    R, T = eng.R, eng.T
    two = copy.copy(eng)
    two.box_runs = True  # builders bound against this copy run with 2-D box sels only (ops.into)
    two.regs = {k: v.reshape(R, T) for k, v in eng.regs.items()}
    two._views = {}
    for name in ("lane_block", "lane_slot", "lane_tid", "laneid", "lbit", "gwarp", "sh_base", "loc_base"):
        setattr(two, name, getattr(eng, name).reshape(R, T))
    two.tid_xyz = [a.reshape(R, T) for a in eng.tid_xyz]
    two.ctaid_xyz = [a.reshape(R, T) for a in eng.ctaid_xyz]
    two.slot_shared = (np.arange(R, dtype=np.int64) * eng.shared_size)[:, None]
    return two


def lazy(two, inst):
    """inst's run for box sels, bound when a box first reaches it (most instructions of a small
    launch never see one, and binding costs as much as running a small group), or None."""
    if two is None or inst.op not in BOX_OPS or inst.kind != PLAIN:
        return None

    def first(sel):
        run = inst.run2 = bind(two, inst)
        return FALLBACK if run is None else run(sel)
    return first


def bind(two, inst):
    """inst's run for box sels, or None when it has none (the engine then uses the 1-D run)."""
    if two is None or inst.op not in BOX_OPS or inst.kind != PLAIN:
        return None
    for o in inst.ops:
        if o.kind == "reg" and o.name and o.name.split(".")[0] in _CLOCKS:
            return None
    try:
        if inst.op in ("ld", "ldu", "st"):
            if space_of(inst) != "param":
                return _memory(two, inst)
            if inst.op == "st" or inst.ops[1].name not in two.param_offset:
                return None  # a device function's .param buffer is (lanes, bytes): not a box
        kind, run = BUILDERS[inst.op](two, inst)
    except (UnsupportedPTX, KeyError, ValueError, TypeError):
        return None
    return run if kind == PLAIN else None


def _memory(two, inst):
    """ld/st in global, const, shared or local space for a box of lanes."""
    space = space_of(inst)
    if space == "generic":
        return None
    load = inst.op != "st"
    t = types_of(inst)[-1]
    dt = np.dtype(NP[t]).newbyteorder("=")
    shift = dt.itemsize.bit_length() - 1
    width = dt.itemsize * vec_of(inst)
    getaddr, _ = address(two, inst, inst.ops[1 if load else 0], space)
    if getaddr is None:
        return None  # a constant address: the lanes all touch one word, a 1-D run is as quick
    place = _placer(two, space, width)
    strided = _strider(two, space, dt, vec_of(inst), load)
    regs = inst.ops[0 if load else 1]
    regs = regs.items if regs.kind == "vec" else (regs,)
    if load:
        puts = [put(two, inst, o, t) for o in regs]

        def run(sel):
            a = getaddr(sel)
            views = strided(a, sel)
            if views is not None:
                for p, v in zip(puts, views):
                    p(sel, v)
                return
            at = place(a, sel)
            if at is None:
                return FALLBACK
            store, index = at
            view = store.view(dt)
            np.right_shift(index, shift, out=index)
            for k, p in enumerate(puts):
                p(sel, view[index + k] if k else view[index])
        return run
    gets = [get(two, inst, o, t) for o in regs]

    def run(sel):
        a = getaddr(sel)
        views = strided(a, sel)
        if views is not None:
            for v, g in zip(views, gets):
                v[...] = g(sel)
            return
        at = place(a, sel)
        if at is None:
            return FALLBACK
        store, index = at
        view = store.view(dt)
        np.right_shift(index, shift, out=index)
        for k, g in enumerate(gets):
            view[index + k if k else index] = g(sel)
    return run


def _placer(two, space, width):
    """place(addresses, sel) -> (byte store, fresh int64 byte indices) when every lane's access
    lies inside one allocation (global) or its window (shared, local) and is aligned, else None."""
    align = width - 1
    if space in ("global", "const"):
        g = two.mem
        base = np.uint64(GLOBAL_BASE)

        def place(a, sel):
            lo, hi = int(a.min()), int(a.max()) + width
            k = bisect.bisect_right(g.starts, lo) - 1
            if k < 0 or hi > g.ends[k] or (align and int(np.bitwise_or.reduce(a, axis=None)) & align):
                return None
            return g, (a - base).view(np.int64)
        return place
    shared = space == "shared"
    limit = two.shared_size if shared else two.local_size
    store = two.win.shared if shared else two.win.local
    rows, lanes = two.slot_shared, two.loc_base

    def place(a, sel):
        if int(a.max()) + width > limit or (a.dtype.kind == "i" and int(a.min()) < 0):
            return None
        if align and int(np.bitwise_or.reduce(a, axis=None)) & align:
            return None
        return store, (rows[sel[0]] + a) if shared else (lanes[sel] + a)
    return place


def _affine(a: np.ndarray):
    """(A, P, Q) with a[r, c] == A + P*r + Q*c for every lane (modulo the dtype's range), or None.
    Costs about half a gather; the access it saves is a gather or a scatter plus a copy."""
    rows, w = a.shape
    A = int(a[0, 0])
    Q = int(a[0, 1]) - A if w > 1 else 0
    P = int(a[1, 0]) - A if rows > 1 else 0
    # The first row and the first column decide most misses for the price of a few lanes.
    if w > 1 and not (a[0, 1:] - a[0, :-1] == a[0, 1] - a[0, 0]).all():
        return None
    if rows > 1 and not (a[1:, 0] - a[:-1, 0] == a[1, 0] - a[0, 0]).all():
        return None
    if w > 1 and rows > 1:
        if P == 0:  # every block the same offsets (shared s[tid]): one comparison, no differences
            if not (a[1:] == a[0]).all():
                return None
        elif not (a[1:, 1:] - a[1:, :-1] == a[0, 1] - a[0, 0]).all():
            return None
    return A, P, Q


def _strider(two, space, dt, nvec, load):
    """strided(addresses, sel) -> one (rows, tids) view of memory per vector element when the
    box's addresses are affine in (row, tid), aligned and in bounds (and, for a store, no two
    lanes overlap), else None. s[tid], s[tid + stride], x[blockIdx.x * blockDim.x + tid] are.
    The bounds are checked on the affine corners: an affine value inside the window that equals
    the real address modulo 2^bits is the real address, since both lie in the dtype's range."""
    if space == "local":
        return lambda a, sel: None
    size = dt.itemsize
    width = size * nvec
    shared = space == "shared"
    S = two.shared_size
    g, win = two.mem, two.win

    def strided(a, sel):
        aff = _affine(a)
        if aff is None:
            return None
        A, P, Q = aff
        rows, w = a.shape
        if (A | P | Q) % width or Q < 0:
            return None
        if not load and w > 1 and Q < width:
            return None  # lanes of a row store to the same bytes: the gather path orders them
        if shared:
            lo = A + min(0, P * (rows - 1))
            hi = A + max(0, P * (rows - 1)) + Q * (w - 1) + width
            if lo < 0 or hi > S or S + P < 0:
                return None
            buf, start, row_step = win.shared.buf, sel[0].start * S + A, S + P
        else:
            if P < 0 or (not load and rows > 1 and P < Q * (w - 1) + width):
                return None
            hi = A + P * (rows - 1) + Q * (w - 1) + width
            j = bisect.bisect_right(g.starts, A) - 1
            if j < 0 or hi > g.ends[j]:
                return None
            buf, start, row_step = g.buf, A - GLOBAL_BASE, P
        return [np.ndarray((rows, w), dt, buf, start + k * size, (row_step, Q)) for k in range(nvec)]
    return strided
