"""Thread-block clusters (sm_90): the cluster registers, barrier.cluster, mapa, distributed shared
memory (ld/st.shared::cluster), and setmaxnreg. It is longer than ~300 lines: the launch shape,
the barrier and the remote accesses all turn on one mapping of blocks to clusters and ranks.

A kernel's cluster dimensions are its `.reqnctapercluster` (`__cluster_dims__(x, y, z)` in CUDA C);
a kernel without them runs in clusters of one block, as on a GPU launched without them. The
blocks of a cluster are resident together: they start together in consecutive slots and their
slots take the next cluster only when all of them finished (lanes.py calls cluster_order and
free_groups). A shared::cluster address names its block's rank in bits 24 and up (rank + 1; 0 is
the executing block), which is what `mapa.shared::cluster` returns; `mapa.u64` returns the same
offset inside the generic shared window, and generic loads and stores of a kernel that uses mapa
check for it. `barrier.cluster.arrive` counts a thread in the cluster's phase;
`barrier.cluster.wait` parks it (ops.PARK) until every thread of the cluster that has not exited
arrived. The sanitizer's `dsmem-unsynchronized` is a read of another block's shared memory (or of
one's own, written by another block) that no cluster barrier separates from the write.
`setmaxnreg.{inc,dec}.sync.aligned.u32 N` only checks N (24..256, a multiple of 8).
"""
from __future__ import annotations

import numpy as np

from . import ops as _ops
from . import ops_atom, ops_ctrl, ops_mem  # noqa: F401  (the builders this module routes from)
from .findings import EmulatorError, UnsupportedPTX
from .lanesets import merge as _merge
from .memory import SHARED_WINDOW
from .ops import NP, PARK, PLAIN, builder, const, get, put, scalar, types_of

RANK_SHIFT = 24
_LOW = (1 << RANK_SHIFT) - 1


# ---- launch shape --------------------------------------------------------------------------------
def cluster_order(grid, cluster, sample=None) -> np.ndarray:
    """Linear block ids cluster by cluster (clusters x fastest, ranks x fastest inside); with a
    sample of blocks, the whole clusters that hold them."""
    (gx, gy, gz), (cx, cy, cz) = grid, cluster
    if gx % cx or gy % cy or gz % cz:
        raise EmulatorError(f"grid {tuple(grid)} is not a whole number of clusters of {tuple(cluster)} blocks: "
                            "each grid dimension must be a multiple of the cluster's")
    if cx * cy * cz > 16:
        raise EmulatorError(f"a cluster holds at most 16 blocks (8 portably); {tuple(cluster)} has {cx * cy * cz}")
    n = (gx // cx) * (gy // cy) * (gz // cz)
    c, r = np.arange(n)[:, None], np.arange(cx * cy * cz)[None, :]
    ncx, ncy = gx // cx, gy // cy
    bx = (c % ncx) * cx + r % cx
    by = ((c // ncx) % ncy) * cy + (r // cx) % cy
    bz = (c // (ncx * ncy)) * cz + r // (cx * cy)
    blocks = bx + gx * (by + gy * bz)
    if sample is not None:
        blocks = blocks[np.isin(blocks, sample).any(axis=1)]
    return blocks.ravel().astype(np.int64)


def free_groups(eng, slots) -> np.ndarray:
    """The slots of the clusters whose every block finished (they start the next cluster)."""
    cs = eng.cs
    out = [np.arange(g * cs, (g + 1) * cs) for g in np.unique(np.asarray(slots) // cs).tolist()
           if (eng.slot_block[g * cs:(g + 1) * cs] < 0).all()]
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _xyz(eng, blocks):
    gx, gy = eng.grid[0], eng.grid[1]
    return blocks % gx, (blocks // gx) % gy, blocks // (gx * gy)


def rank_of(eng, blocks) -> np.ndarray:
    (x, y, z), (cx, cy, cz) = _xyz(eng, np.asarray(blocks)), eng.cluster
    return x % cx + cx * ((y % cy) + cy * (z % cz))


def cluster_of(eng, blocks) -> np.ndarray:
    (x, y, z), (cx, cy, cz) = _xyz(eng, np.asarray(blocks)), eng.cluster
    ncx, ncy = eng.grid[0] // cx, eng.grid[1] // cy
    return x // cx + ncx * ((y // cy) + ncy * (z // cz))


def block_of_rank(eng, blocks, ranks) -> np.ndarray:
    (x, y, z), (cx, cy, cz) = _xyz(eng, np.asarray(blocks)), eng.cluster
    ranks = np.asarray(ranks)
    tx, ty, tz = x - x % cx + ranks % cx, y - y % cy + (ranks // cx) % cy, z - z % cz + ranks // (cx * cy)
    return tx + eng.grid[0] * (ty + eng.grid[1] * tz)


def special(eng, base, k, t):
    """%clusterid, %nclusterid, %cluster_ctaid, %cluster_nctaid, %cluster_ctarank,
    %cluster_nctarank, %is_explicit_cluster."""
    c, dt = eng.cluster, NP[t]
    if base == "%clusterid":
        arr = eng.ctaid_xyz[k]
        return lambda sel: (arr[sel] // np.uint32(c[k])).astype(dt)
    if base == "%nclusterid":
        return const(scalar(eng.grid[k] // c[k], t))
    if base == "%cluster_ctaid":
        arr = eng.ctaid_xyz[k]
        return lambda sel: (arr[sel] % np.uint32(c[k])).astype(dt)
    if base == "%cluster_nctaid":
        return const(scalar(c[k], t))
    if base == "%cluster_ctarank":
        return lambda sel: rank_of(eng, eng.lane_block[sel]).astype(dt)
    if base == "%cluster_nctarank":
        return const(scalar(eng.cs, t))
    if base == "%is_explicit_cluster":
        return const(scalar(int(eng.cs > 1), t))
    raise UnsupportedPTX(f"special register {base}", None, None)


def resolve(eng, lanes, offs):
    """(blocks, offsets) for shared::cluster offsets of these lanes (rank + 1 in bits 24..)."""
    offs = np.asarray(offs, np.int64)
    rank = offs >> RANK_SHIFT
    blocks = eng.lane_block[lanes].copy()
    remote = rank > 0
    if remote.any():
        r = rank[remote] - 1
        if (r >= eng.cs).any() or (r < 0).any():
            raise UnsupportedPTX(f"a shared::cluster address of block rank {int(r.max())} in a cluster of {eng.cs}",
                                 None, None)
        blocks[remote] = block_of_rank(eng, blocks[remote], r)
    return blocks, offs & _LOW


# ---- instructions --------------------------------------------------------------------------------
@builder("mapa", pipe="int")
def mapa(eng, inst):
    generic = "shared::cluster" not in inst.mods
    t = "u64" if "u64" in inst.mods else "u32"
    if (check := _check(eng)) is not None:
        check.track_dsmem(eng.shared_size)
    d, a, r = put(eng, inst, inst.ops[0], t), get(eng, inst, inst.ops[1], t), get(eng, inst, inst.ops[2], "u32")

    def run(sel):
        rank = np.broadcast_to(np.asarray(r(sel)).astype(np.int64), np.shape(eng.lane_block[sel]))
        if (rank >= eng.cs).any():
            raise UnsupportedPTX(f"mapa to block rank {int(rank.max())} in a cluster of {eng.cs}", inst.file, inst.line)
        addr = np.asarray(a(sel)).astype(np.uint64)
        if generic:  # a generic shared address: the rank's window inside the shared window
            off = (addr - np.uint64(SHARED_WINDOW)).astype(np.int64) & _LOW
            d(sel, (np.uint64(SHARED_WINDOW) + (((rank + 1) << RANK_SHIFT) | off).astype(np.uint64)).astype(NP[t]))
            return
        d(sel, (((rank + 1) << RANK_SHIFT) | (addr.astype(np.int64) & _LOW)).astype(NP[t]))
    return PLAIN, run


def _state(eng):
    st = getattr(eng, "cluster_bar", None)
    if st is None:
        n = (eng.nblocks // eng.cs) if eng.cs else 1
        st = eng.cluster_bar = {"count": np.zeros(n, np.int64), "phase": np.zeros(n, np.int64),
                                "lane": np.full(eng.N, -1, np.int64)}
        eng.cluster_waiting = {}
    return st


def _arrive(eng, sel):
    st = _state(eng)
    lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)
    cid = cluster_of(eng, eng.lane_block[lanes])
    st["lane"][lanes] = st["phase"][cid]
    np.add.at(st["count"], cid, 1)
    for c in np.unique(cid).tolist():
        slots = np.flatnonzero(np.isin(eng.slot_block, cluster_members(eng, c)))
        need = eng.T * eng.cs - int(eng.exited[slots].sum()) - eng.T * (eng.cs - slots.size)
        if st["count"][c] >= need:
            st["count"][c] = 0
            st["phase"][c] += 1
            check = _check(eng)
            if check is not None:
                check.cluster_barrier(eng.slot_block[slots])
            _release(eng, st, c)


def cluster_members(eng, c) -> np.ndarray:
    order = eng.__dict__.get("cluster_blocks")
    if order is None:
        order = eng.cluster_blocks = cluster_order(eng.grid, eng.cluster)
    return order[c * eng.cs:(c + 1) * eng.cs]


def _release(eng, st, c) -> None:
    for pc, lanes in list(eng.cluster_waiting.items()):
        go = (cluster_of(eng, eng.lane_block[lanes]) == c) & (st["lane"][lanes] < st["phase"][c])
        if go.any():
            rest = lanes[~go]
            if rest.size:
                eng.cluster_waiting[pc] = rest
            else:
                del eng.cluster_waiting[pc]
            eng._push(pc + 1, lanes[go])


def _wait(eng, pc, idx) -> None:
    st = _state(eng)
    cid = cluster_of(eng, eng.lane_block[idx])
    done = st["lane"][idx] < st["phase"][cid]
    if done.any():
        eng._push(pc + 1, idx[done])
    if not done.all():
        eng.cluster_waiting[pc] = _merge(eng.cluster_waiting.get(pc), idx[~done], eng.every)


_base_barrier = _ops.BUILDERS["barrier"]  # bar.sync's family (ops_ctrl): barrier.sync, barrier.arrive


def barrier(eng, inst):
    mods = inst.mods
    if "cluster" not in mods:
        return _base_barrier(eng, inst)
    if "arrive" in mods:
        return PLAIN, lambda sel: _arrive(eng, sel)
    if "wait" in mods:
        inst.aux = _wait
        return PARK, lambda sel: None
    raise UnsupportedPTX(inst.opcode, inst.file, inst.line)


@builder("setmaxnreg", pipe="other")
def setmaxnreg(eng, inst):
    n = inst.ops[0].value if inst.ops and inst.ops[0].kind == "imm" else None
    if n is None or not 24 <= n <= 256 or n % 8:
        raise UnsupportedPTX(inst.opcode + " (the register count is an immediate 24..256, a multiple of 8)",
                             inst.file, inst.line)
    return PLAIN, lambda sel: None


_ops.BUILDERS["barrier"] = barrier


def _check(eng):
    from .hopper_check import check_of
    return check_of(eng) if eng.observer is not None else None


# ---- distributed shared memory -------------------------------------------------------------------
def _as_shared(base):
    """ld/st/atom/red.shared::cta and .shared::cluster run as their .shared forms; an ld or st of
    a shared::cluster address of a block rank (mapa's) reads or writes that block's memory."""
    from .ptx import Inst

    def routed(eng, inst):
        if not any(m in ("shared::cta", "shared::cluster") for m in inst.mods):
            if inst.op in ("ld", "st") and ops_mem.space_of(inst) == "generic" and _uses_mapa(eng):
                kind, local = base(eng, inst)  # a generic pointer may be mapa.u64's to another block
                return kind, _remote(eng, inst, local, generic=True)
            return base(eng, inst)
        opcode = inst.opcode.replace("shared::cluster", "shared").replace("shared::cta", "shared")
        proxy = Inst(inst.pc, opcode, inst.ops, inst.guard, inst.neg, inst.file, inst.line, inst.func, inst.text)
        proxy.aux, proxy.target = inst.aux, inst.target
        kind, local = base(eng, proxy)
        inst.aux = proxy.aux
        if "shared::cluster" not in inst.mods or inst.op not in ("ld", "st"):
            return kind, local
        if (check := _check(eng)) is not None:
            check.track_dsmem(eng.shared_size)
        return kind, _remote(eng, inst, local)
    return routed


def _uses_mapa(eng) -> bool:
    found = eng.__dict__.get("uses_mapa")
    if found is None:
        found = eng.uses_mapa = any(i.op == "mapa" for i in eng.code_used)
    return found


def _remote(eng, inst, local, generic=False):
    t = types_of(inst)[-1]
    nvec = next((int(m[1:]) for m in inst.mods if m in ("v2", "v4")), 1)
    dt = np.dtype(NP[t])
    load = inst.op == "ld"
    data_op, addr_op = (inst.ops[0], inst.ops[1]) if load else (inst.ops[1], inst.ops[0])
    regs = data_op.items if data_op.kind == "vec" else (data_op,)
    io = [put(eng, inst, o, t) for o in regs] if load else [get(eng, inst, o, t) for o in regs]
    getaddr, const_addr = ops_mem.address(eng, inst, addr_op, "global" if generic else "shared")
    size = dt.itemsize * nvec

    def run(sel):
        lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)
        raw = np.broadcast_to(np.asarray(getaddr(sel) if getaddr is not None else const_addr), lanes.shape)
        if generic:  # only addresses inside the shared window, past this block's own 16 MB
            rel = raw.astype(np.uint64) - np.uint64(SHARED_WINDOW)
            inside = rel < np.uint64(1 << 32)
            a = np.where(inside, rel, 0).astype(np.int64)
        else:
            a = raw.astype(np.int64)
        far = (a >> RANK_SHIFT) > 0
        if not far.any():
            return local(sel)
        if not far.all():
            local(lanes[~far])
        fl = lanes[far]
        blocks, offs = resolve(eng, fl, a[far])
        slot = np.full(fl.size, -1, np.int64)
        for b in np.unique(blocks).tolist():
            s = np.flatnonzero(eng.slot_block == b)
            slot[blocks == b] = s[0] if s.size else -1
        bad = (slot < 0) | (offs < 0) | (offs + size > eng.shared_size) | (offs % dt.itemsize != 0)
        if bad.any():
            eng.report("out-of-bounds", inst, fl[bad], f"{inst.opcode} reaches shared byte offset "
                       f"{int(offs[bad][0])} of cluster block rank {int((a[far][bad][0] >> RANK_SHIFT) - 1)}, which "
                       f"is outside its {eng.shared_size} bytes or no longer running", space="shared")
        ok = ~bad
        index = slot * eng.shared_size + offs
        buf = eng.win.shared.buf
        check = _check(eng)
        if check is not None and ok.any():
            check.dsmem_access(inst, load, eng.lane_block[fl[ok]], eng.lane_tid[fl[ok]], blocks[ok], offs[ok], size)
        for k, f in enumerate(io):
            at = index[ok][:, None] + k * dt.itemsize + np.arange(dt.itemsize)
            if load:
                vals = np.zeros(fl.size, dt)
                vals[ok] = np.ascontiguousarray(buf[at]).view(dt).ravel()
                f(fl, vals)
            else:
                v = np.broadcast_to(np.asarray(f(fl[ok])).astype(dt), (int(ok.sum()),))
                buf[at] = np.ascontiguousarray(v).view(np.uint8).reshape(-1, dt.itemsize)
        if not load and eng.observer is not None and ok.any():
            _defined(eng, blocks[ok], offs[ok], size)
    return run


def _defined(eng, blocks, offs, size) -> None:
    """Tell the sanitizer these bytes of other blocks now hold values (their writer is another
    block, which its per-block race and init shadow does not see), in contiguous runs."""
    for b in np.unique(blocks).tolist():
        o = np.unique(offs[blocks == b])
        cuts = np.flatnonzero(np.diff(o) > size) + 1
        for run in np.split(o, cuts):
            eng.observer.on_shared_init(np.array([b]), int(run[0]), int(run[-1] - run[0]) + size)


for _op in ("ld", "st", "atom", "red"):
    if _op in _ops.BUILDERS:
        _ops.BUILDERS[_op] = _as_shared(_ops.BUILDERS[_op])

__all__ = ["barrier", "cluster_order", "free_groups", "mapa", "resolve", "setmaxnreg", "special"]
