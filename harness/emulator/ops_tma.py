"""The tensor memory accelerator (sm_90): bulk copies and tensor copies, and their reductions.
It is longer than ~300 lines: flat and tensor copies, both directions and the reductions share
the landing, bounds and map-reading helpers, kept in one place.

  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]
  cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
  cp.reduce.async.bulk.global.shared::cta.bulk_group.{add,min,max,and,or,xor,inc,dec}.type [dst], [src], size
  cp.async.bulk.tensor.{1..5}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, {c..}], [mbar]
  cp.async.bulk.tensor.{1..5}d.global.shared::cta.tile.bulk_group [map, {c..}], [src]
  cp.reduce.async.bulk.tensor.{1..5}d.global.shared::cta.{add,min,max,...}.tile.bulk_group [map, {c..}], [src]
  cp.async.bulk.commit_group, cp.async.bulk.wait_group{.read} N, cp.async.bulk.prefetch{.tensor}
  cp.async.mbarrier.arrive{.noinc}.shared.b64 [mbar]   (its thread's cp.async copies land, then it arrives)

Copies into shared memory read global memory at issue and land when a thread tests their mbarrier
(ops_mbarrier.py); landing writes the box (swizzled as the map says; out-of-bounds elements zero, or
NaN with the map's NaN fill) and completes its bytes on the barrier. Copies to global memory (stores,
reductions) happen at issue, through the checked global path; the shared bytes they read are the
ones there at issue. A tensor map is the 128 bytes of a kernel parameter (a __grid_constant__
CUtensorMap, addressed through cvta.param) or of global memory, made by tensormap.encode_tiled.
"""
from __future__ import annotations

import numpy as np

from . import ops as _ops
from . import ops_async  # noqa: F401  (cp.async, which this module routes from)
from . import ops_mbarrier as mb
from .findings import UnsupportedPTX
from .ops import PLAIN, builder, get
from .ops_mem import address, locate
from .tensormap import decode, swizzle_offsets

_REDUCE = ("add", "min", "max", "and", "or", "xor", "inc", "dec")
_RTYPES = {"f32": np.float32, "f64": np.float64, "u32": np.uint32, "s32": np.int32, "u64": np.uint64,
           "s64": np.int64, "b32": np.uint32, "b64": np.uint64, "f16": np.float16}


def _dst_space(mods) -> str:
    """The destination state space: the first space named after bulk / tensor.Nd."""
    for m in mods:
        if m.startswith("shared"):
            return "shared"
        if m == "global":
            return "global"
    return "?"


def _global_bytes(eng, inst, lane, addr: int, n: int, op="ld") -> np.ndarray:
    """n bytes of global memory at addr, read as lane's access (bounds and init checks)."""
    sel = np.array([lane])
    (t,) = locate(eng, inst, "global", np.array([addr], np.uint64), sel, n, 16 if addr % 16 == 0 else 1, op)
    if t.bad is not None and t.bad.any():
        return np.full(n, 0xFF, np.uint8)
    i = int(t.index[0])
    return eng.mem.buf[i:i + n].copy()


def _smem(eng, block: int):
    """The byte view of this resident block's shared window, or None when it is not resident."""
    slots = np.flatnonzero(eng.slot_block == block)
    if slots.size == 0:
        return None
    s = eng.shared_size
    return eng.win.shared.buf[int(slots[0]) * s:(int(slots[0]) + 1) * s]


def _smem_check(eng, inst, lanes, offs, n) -> bool:
    bad = (offs < 0) | (offs + n > eng.shared_size)
    if bad.any():
        eng.report("out-of-bounds", inst, lanes[bad],
                   f"{inst.opcode} copies {n} bytes at shared offset {int(offs[bad][0])}, past the block's "
                   f"{eng.shared_size} bytes of shared memory", address=int(offs[bad][0]), space="shared")
    return not bad.any()


def _queue(eng, inst, lane, block, key, dst_positions: np.ndarray, data: np.ndarray) -> None:
    """A copy in flight to shared memory of `block`, landing at a wait on barrier `key`."""
    st = mb.state(eng)
    bar = st.bars.get(key)
    phase = bar.phase if bar is not None else 0
    lo, hi = int(dst_positions.min()), int(dst_positions.max()) + 1
    if st.check is not None:
        st.check.copy_issued(inst, block, lo, hi, key, phase, int(eng.lane_tid[lane]))
    nbytes = data.size

    def land():
        buf = _smem(eng, block)
        if buf is not None:
            buf[dst_positions] = data
            if eng.observer is not None:
                eng.observer.on_shared_init(np.array([block]), lo, hi - lo)
        mb.complete_tx(eng, inst, st, key, nbytes)
    st.inflight.setdefault(key, []).append(land)


def _map_of(eng, inst, o):
    """sel -> the TensorMap each lane names (the operand is a register or a parameter symbol)."""
    if o.kind == "sym" or (o.kind == "reg" and o.name not in eng.regs):
        at = eng.symbol_address(o.name, inst)
        return lambda lane: _decode_at(eng, inst, int(at), lane)
    reg = get(eng, inst, o, "u64")
    return lambda lane: _decode_at(eng, inst, int(np.asarray(reg(np.array([lane])))[0]), lane)


def _decode_at(eng, inst, addr, lane):
    params = eng._params
    if 0 <= addr and addr + 128 <= len(params):
        raw = params[addr:addr + 128]
    else:
        raw = _global_bytes(eng, inst, lane, addr, 128).tobytes()
    m = decode(raw)
    if m is None:
        raise UnsupportedPTX(f"{inst.opcode} with a tensor map not made by the launch plan's tensor_map()",
                             inst.file, inst.line)
    return m


def box_positions(m, coords):
    """Global byte addresses (int64), in-bounds mask, per element of the box, innermost fastest."""
    axes = []
    for k in range(m.rank):
        n = -(-m.box[k] // m.estrides[k])
        axes.append(int(coords[k]) + np.arange(n, dtype=np.int64) * m.estrides[k])
    grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # outermost first, so innermost is fastest
    addr = np.full(grids[0].shape, m.address, np.int64)
    ok = np.ones(grids[0].shape, bool)
    for k, g in enumerate(grids):
        addr = addr + g * m.strides[k]
        ok &= (g >= 0) & (g < m.dims[k])
    return addr.ravel(), ok.ravel()


def _element_bytes(eng, addr, ok, esize):
    """The bytes of every element (elements, esize); out-of-bounds ones zero."""
    out = np.zeros((addr.size, esize), np.uint8)
    if ok.any():
        from .memory import GLOBAL_BASE
        idx = addr[ok] - GLOBAL_BASE
        out[ok] = eng.mem.buf[idx[:, None] + np.arange(esize)]
    return out


def bulk(eng, inst):
    mods = inst.mods
    if "commit_group" in mods or "wait_group" in mods or "prefetch" in mods:
        return PLAIN, lambda sel: None  # copies to global are done at issue; prefetches are hints
    if "mbarrier" in mods and "arrive" in mods:
        return _cp_async_arrive(eng, inst)
    if any(m.startswith("multicast") for m in mods):
        raise UnsupportedPTX(inst.opcode + " (.multicast::cluster)", inst.file, inst.line)
    reduce = mods[0] == "reduce"
    tensor = "tensor" in mods
    to_shared = _dst_space(mods) == "shared"
    if sum(m.startswith("shared") for m in mods) > 1:  # shared::cta -> shared::cluster (another block)
        raise UnsupportedPTX(inst.opcode + " (bulk copies between shared memories)", inst.file, inst.line)
    if to_shared and reduce:
        raise UnsupportedPTX(inst.opcode + " (a reduction into shared memory)", inst.file, inst.line)
    if tensor:
        return _tensor(eng, inst, to_shared, reduce)
    return _flat(eng, inst, to_shared, reduce)


def _cp_async_arrive(eng, inst):
    from .ops_async import _complete, _state
    at = mb.shared_offsets(eng, inst, inst.ops[0])
    noinc = "noinc" in inst.mods

    def run(sel):
        lanes = mb.lanes_of(sel)
        st = getattr(eng, "async_copies", None)
        if st is not None and st.copies:
            _complete(eng, _state(eng), lanes, None)
        blocks, offs = mb.target_blocks(eng, lanes, at(sel))
        hs = mb.state(eng)
        for b, f, lane in zip(blocks.tolist(), offs.tolist(), lanes.tolist()):
            bar = hs.bars.get((b, f))
            if bar is not None and not noinc:
                bar.pending += 1  # without .noinc the arrival is counted in advance
            mb.arrive(eng, inst, hs, (b, f), np.array([lane]), 1)
    return PLAIN, run


def _flat(eng, inst, to_shared, reduce):
    o = inst.ops
    size = get(eng, inst, o[2], "u32")
    if to_shared:
        dst = mb.shared_offsets(eng, inst, o[0])
        sget, sconst = address(eng, inst, o[1], "global")
        bar = mb.shared_offsets(eng, inst, o[3])

        def run(sel):
            lanes = mb.lanes_of(sel)
            n = np.broadcast_to(np.asarray(size(sel)).astype(np.int64), lanes.shape)
            src = np.broadcast_to(np.asarray(sget(sel) if sget is not None else sconst).astype(np.uint64), lanes.shape)
            blocks, offs = mb.target_blocks(eng, lanes, dst(sel))
            bblocks, boffs = mb.target_blocks(eng, lanes, bar(sel))
            for i, lane in enumerate(lanes.tolist()):
                k = int(n[i])
                if k % 16 or int(src[i]) % 16 or int(offs[i]) % 16:
                    _misaligned(eng, inst, lane, k)
                    continue
                if not _smem_check(eng, inst, lanes[i:i + 1], offs[i:i + 1], k):
                    continue
                data = _global_bytes(eng, inst, lane, int(src[i]), k)
                _queue(eng, inst, lane, int(blocks[i]), (int(bblocks[i]), int(boffs[i])),
                       int(offs[i]) + np.arange(k), data)
        return PLAIN, run
    dget, dconst = address(eng, inst, o[0], "global")
    src = mb.shared_offsets(eng, inst, o[1])
    rop = next((m for m in inst.mods if m in _REDUCE), None) if reduce else None
    rt = next((m for m in inst.mods if m in _RTYPES), None) if reduce else None
    if reduce and (rop is None or rt is None):
        raise UnsupportedPTX(inst.opcode + " (this reduction)", inst.file, inst.line)

    def run(sel):
        lanes = mb.lanes_of(sel)
        n = np.broadcast_to(np.asarray(size(sel)).astype(np.int64), lanes.shape)
        d = np.broadcast_to(np.asarray(dget(sel) if dget is not None else dconst).astype(np.uint64), lanes.shape)
        blocks, offs = mb.target_blocks(eng, lanes, src(sel))
        for i, lane in enumerate(lanes.tolist()):
            k = int(n[i])
            if k % 16 or int(d[i]) % 16 or int(offs[i]) % 16:
                _misaligned(eng, inst, lane, k)
                continue
            if not _smem_check(eng, inst, lanes[i:i + 1], offs[i:i + 1], k):
                continue
            data = _smem(eng, int(blocks[i]))[int(offs[i]):int(offs[i]) + k].copy()
            _store(eng, inst, lane, int(d[i]) + np.arange(0, k, dtype=np.int64), data, rop, rt, k)
    return PLAIN, run


def _misaligned(eng, inst, lane, k):
    eng.report("misaligned", inst, np.array([lane]),
               f"{inst.opcode}: a bulk copy's size ({k} bytes) and both addresses must be multiples of 16 bytes",
               space="shared")


def _store(eng, inst, lane, gaddr_bytes, data, rop, rt, k):
    """data (k bytes) to the k global bytes starting at gaddr_bytes[0]; with rop, reduced into them."""
    start = int(gaddr_bytes[0])
    (t,) = locate(eng, inst, "global", np.array([start], np.uint64), np.array([lane]), k, 16, "atom" if rop else "st")
    if t.bad is not None and t.bad.any():
        return
    i = int(t.index[0])
    dst = eng.mem.buf[i:i + k]
    if rop is None:
        dst[:] = data
        return
    dt = np.dtype(_RTYPES[rt])
    old, new = dst.view(dt), data.view(dt)
    dst[:] = _reduce(old, new, rop, dt).astype(dt).view(np.uint8)


def _reduce(old, new, rop, dt):
    if rop == "add":
        return old + new
    if rop == "min":
        return np.minimum(old, new)
    if rop == "max":
        return np.maximum(old, new)
    if rop in ("and", "or", "xor"):
        return getattr(np, f"bitwise_{rop}")(old, new)
    if rop == "inc":
        return np.where(old >= new, 0, old + 1)
    return np.where((old == 0) | (old > new), new, old - 1)  # dec


def _tensor(eng, inst, to_shared, reduce):
    o = inst.ops
    if "tile" not in inst.mods:
        raise UnsupportedPTX(inst.opcode + " (only .tile tensor copies, not .im2col)", inst.file, inst.line)
    rank = next(int(m[0]) for m in inst.mods if len(m) == 2 and m[1] == "d" and m[0].isdigit())
    tm_op = o[1] if to_shared else o[0]
    if tm_op.kind != "tmap" or len(tm_op.items) != rank + 1:
        raise UnsupportedPTX(inst.opcode + f" (expects [map, {{{rank} coordinates}}])", inst.file, inst.line)
    tmap = _map_of(eng, inst, tm_op.items[0])
    coords = [get(eng, inst, c, "s32") for c in tm_op.items[1:]]
    smem = mb.shared_offsets(eng, inst, o[0] if to_shared else o[1])
    bar = mb.shared_offsets(eng, inst, o[2]) if to_shared else None
    rop = next((m for m in inst.mods if m in _REDUCE), None) if reduce else None

    def run(sel):
        lanes = mb.lanes_of(sel)
        cs = [np.broadcast_to(np.asarray(c(sel)).astype(np.int64), lanes.shape) for c in coords]
        blocks, offs = mb.target_blocks(eng, lanes, smem(sel))
        if bar is not None:
            bblocks, boffs = mb.target_blocks(eng, lanes, bar(sel))
        for i, lane in enumerate(lanes.tolist()):
            m = tmap(lane)
            if m.rank != rank:
                raise UnsupportedPTX(f"{inst.opcode} with a rank-{m.rank} tensor map", inst.file, inst.line)
            addr, ok = box_positions(m, [c[i] for c in cs])
            nbytes = addr.size * m.esize
            base = int(offs[i])
            if base % 128 or (m.swizzle and base % (256 * (1 << m.swizzle)) and base % 1024):
                eng.report("misaligned", inst, np.array([lane]),
                           f"{inst.opcode}: the shared-memory box at offset {base} must be 128-byte aligned "
                           "(1024-byte aligned with 128B swizzling)", address=base, space="shared", once=True)
            if not _smem_check(eng, inst, lanes[i:i + 1], offs[i:i + 1], nbytes):
                continue
            pos = swizzle_offsets(base + np.arange(nbytes, dtype=np.int64), m.swizzle)
            if to_shared:
                if eng.observer is not None and ok.any():  # the copy engine's reads, for the counters
                    sectors = np.unique(addr[ok] >> 5) << 5
                    eng.observer.on_bulk_read(inst, int(eng.lane_block[lane]), int(eng.lane_tid[lane]),
                                              sectors.astype(np.uint64))
                data = _element_bytes(eng, addr, ok, m.esize)
                if m.nan_fill and not ok.all():
                    data[~ok] = np.frombuffer(np.array(np.nan, _float_of(m)).tobytes(), np.uint8)
                _queue(eng, inst, lane, int(blocks[i]), (int(bblocks[i]), int(boffs[i])), pos, data.ravel())
            else:
                data = _smem(eng, int(blocks[i]))[pos].reshape(-1, m.esize)
                _tensor_store(eng, inst, lane, m, addr, ok, data, rop)
    return PLAIN, run


def _float_of(m):
    return {6: np.float16, 7: np.float32, 8: np.float64, 10: np.float32, 11: np.float32, 12: np.float32}.get(
        m.dtype, np.float32)


_MAP_NP = {0: np.uint8, 1: np.uint16, 2: np.uint32, 3: np.int32, 4: np.uint64, 5: np.int64, 6: np.float16,
           7: np.float32, 8: np.float64, 9: np.uint16, 10: np.float32, 11: np.float32, 12: np.float32}


# The tensor-map types each reduction exists for (PTX ISA, cp.reduce.async.bulk.tensor); the rest
# is an illegal instruction on a GPU.
_TENSOR_REDUCE = {"add": {2, 3, 4, 6, 7, 9, 10}, "min": {2, 3, 4, 5, 6, 9}, "max": {2, 3, 4, 5, 6, 9},
                  "inc": {2}, "dec": {2}, "and": {2, 3, 4, 5}, "or": {2, 3, 4, 5}, "xor": {2, 3, 4, 5}}
_MAP_NAMES = {0: "uint8", 1: "uint16", 2: "uint32", 3: "int32", 4: "uint64", 5: "int64", 6: "float16",
              7: "float32", 8: "float64", 9: "bfloat16", 10: "float32_ftz", 11: "tfloat32", 12: "tfloat32_ftz"}


def _tensor_store(eng, inst, lane, m, addr, ok, data, rop):
    """The in-bounds elements of the box to global memory (reduced into it with rop)."""
    if rop is not None and m.dtype not in _TENSOR_REDUCE[rop]:
        eng.report("trap", inst, np.array([lane]),
                   f"{inst.opcode}: TMA has no .{rop} reduction for a {_MAP_NAMES[m.dtype]} tensor map (a GPU stops "
                   "the kernel with an illegal instruction): reduce into a map of a type it supports "
                   "(.add: 32/64-bit integers, float16, bfloat16, float32)", once=True)
        eng.stopped = True
        return
    if not ok.any():
        return
    a, d = addr[ok], data[ok]
    (t,) = locate(eng, inst, "global", a.astype(np.uint64), np.full(a.size, lane), m.esize, m.esize,
                  "atom" if rop else "st")
    keep = np.ones(a.size, bool) if t.bad is None else ~t.bad
    idx = t.index[keep][:, None] + np.arange(m.esize)
    if rop is None:
        eng.mem.buf[idx] = d[keep]
        return
    dt = np.dtype(_MAP_NP[m.dtype])
    if m.dtype == 9:  # bf16: reduce in float32
        old = (eng.mem.buf[idx].copy().view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        new = (d[keep].copy().view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        r = _reduce(old, new, rop, np.float32).astype(np.float32).view(np.uint32)
        r = ((r + 0x7FFF + ((r >> 16) & 1)) >> 16).astype(np.uint16)
        eng.mem.buf[idx] = r.view(np.uint8).reshape(-1, 2)
        return
    old, new = eng.mem.buf[idx].copy().view(dt), d[keep].copy().view(dt)
    eng.mem.buf[idx] = _reduce(old, new, rop, dt).astype(dt).view(np.uint8).reshape(-1, m.esize)


_base_cp = _ops.BUILDERS["cp"]


@builder("cp", pipe="lsu")
def cp(eng, inst):
    mods = inst.mods
    if mods and (mods[0] == "reduce" or "bulk" in mods or ("mbarrier" in mods and "arrive" in mods)):
        return bulk(eng, inst)
    return _base_cp(eng, inst)


__all__ = ["box_positions", "bulk", "cp"]
