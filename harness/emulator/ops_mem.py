"""Loads and stores: ld/st/ldu in every state space (global, shared, local, const, param and
generic), scalar and vector (v2/v4), with out-of-bounds and misaligned accesses turned into
findings: a bad load returns poison (0xFF bytes), a bad store is dropped, and the launch goes on.
Atomics are in ops_atom, which reuses locate().
"""
from __future__ import annotations

import numpy as np

from .findings import EmulatorError, UnsupportedPTX
from .memory import GLOBAL_BASE, LOCAL_WINDOW, POISON, SHARED_WINDOW, WINDOW_SIZE
from .ops import NP, PLAIN, bits, builder, get, put, types_of

SPACES = ("global", "shared", "local", "const", "param")
_U64 = np.uint64


def space_of(inst) -> str:
    return next((m for m in inst.mods if m in SPACES), "generic")


def vec_of(inst) -> int:
    return next((int(m[1:]) for m in inst.mods if m in ("v2", "v4", "v8")), 1)


def address(eng, inst, o, space):
    """A callable sel -> byte addresses (uint64 for global/generic, int64 offsets for shared and
    local), plus the constant address when the operand is a symbol or an immediate."""
    if o.kind != "addr":
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    if o.name is None:
        c = o.value + o.offset
        return None, c
    if o.name in eng.regs:
        w = eng.regs[o.name].dtype.itemsize * 8
        r = eng.view(o.name, "u" + str(w))
        off = o.offset
        if space in ("shared", "local"):
            # offsets stay unsigned: a negative offset wraps to a huge one and fails the bounds check
            if w == 32:
                uo = np.uint32(off % (1 << 32))
                return ((lambda sel: r[sel] + uo) if off else r.__getitem__), None
            r64 = r.view(np.int64)
            return ((lambda sel: r64[sel] + off) if off else r64.__getitem__), None
        if w == 32:
            return (lambda sel: r[sel].astype(np.uint64) + _U64(off % (1 << 64))), None
        if off:
            uo = _U64(off % (1 << 64))
            return (lambda sel: r[sel] + uo), None
        return r.__getitem__, None
    return None, eng.symbol_address(o.name, inst) + o.offset


class Target:
    """Where an access lands for a set of lanes: a byte store and byte indices, with bad lanes."""
    __slots__ = ("store", "index", "bad", "lanes", "space", "addrs")

    def __init__(self, store, index, bad, lanes, space, addrs):
        self.store, self.index, self.bad, self.lanes, self.space, self.addrs = store, index, bad, lanes, space, addrs


def locate(eng, inst, space, a, sel, size, align, op, values=None):
    """Split an access into per-space targets and report bad lanes. `a` holds the addresses of
    the lanes sel (an array, or a scalar for a symbol); `values`, for a store, the stored
    components (the sanitizer tells equal values from different ones)."""
    n = _count(sel)
    if np.ndim(a) == 0:
        a = np.full(n, a, np.int64 if space in ("shared", "local") else np.uint64)
    if space == "generic":
        u = a.astype(np.uint64, copy=False)
        sh = (u - _U64(SHARED_WINDOW)) < _U64(WINDOW_SIZE)
        lo = (u - _U64(LOCAL_WINDOW)) < _U64(WINDOW_SIZE)
        if not sh.any() and not lo.any():
            return [_target(eng, inst, "global", u, sel, None, size, align, op, values)]
        lanes = np.arange(n)
        out = []
        for mask, sp, base in ((sh, "shared", SHARED_WINDOW), (lo, "local", LOCAL_WINDOW),
                               (~(sh | lo), "global", 0)):
            if mask.any():
                part = lanes[mask]
                sub = _subsel(sel, part)
                addr = (u[mask] - _U64(base)).astype(np.int64) if base else u[mask]
                vals = None if values is None else [v if np.ndim(v) == 0 else v[part] for v in values]
                out.append(_target(eng, inst, sp, addr, sub, part, size, align, op, vals))
        return out
    if space == "const":
        space = "global"
    return [_target(eng, inst, space, a, sel, None, size, align, op, values)]


def _count(sel):
    return sel.stop - sel.start if isinstance(sel, slice) else sel.size


def _subsel(sel, part):
    if isinstance(sel, slice):
        return part + sel.start
    return sel[part]


def _target(eng, inst, space, a, sel, lanes, size, align, op, values=None):
    obs = eng.observer
    if obs is not None:
        if op != "ld":  # what a thread changed after a barrier it skipped (engine._after_exit)
            eng.last_mem[sel] = inst.pc
        if values is not None and space != "local":  # stored values: a same-value store is no race
            obs.on_memory(inst, space, op, eng.lane_block[sel], eng.lane_tid[sel], a.astype(np.uint64), size,
                          values=values)
        else:
            obs.on_memory(inst, space, op, eng.lane_block[sel], eng.lane_tid[sel], a.astype(np.uint64), size)
    if space == "global":
        g = eng.mem
        bad = g.bad_lanes(a, size)
        mis = None
        if align > 1 and int(np.bitwise_or.reduce(a)) & (align - 1):
            mis = (a & _U64(align - 1)) != 0
        index = a.view(np.int64) - GLOBAL_BASE if a.dtype == np.uint64 else a.astype(np.int64) - GLOBAL_BASE
        store = g
    else:
        limit = eng.shared_size if space == "shared" else eng.local_size
        bad = None
        if a.size and (int(a.min()) < 0 or int(a.max()) + size > limit):
            bad = (a < 0) | (a + size > limit) if a.dtype.kind == "i" else (a.astype(np.int64) + size > limit)
        mis = None
        if align > 1 and int(np.bitwise_or.reduce(a)) & (align - 1):
            mis = (a & (align - 1)) != 0
        base = eng.sh_base if space == "shared" else eng.loc_base
        index = base[sel] + a
        store = eng.win.shared if space == "shared" else eng.win.local
    if mis is not None and not mis.any():
        mis = None
    if bad is not None or mis is not None:
        bad = _report(eng, inst, space, a, sel, bad, mis, size, op)
        index = np.where(bad, 0, index)
    return Target(store, index, bad, lanes, space, a)


def _report(eng, inst, space, a, sel, bad, mis, size, op):
    lanes = np.arange(_count(sel)) if isinstance(sel, slice) else sel
    if isinstance(sel, slice):
        lanes = lanes + sel.start
    verb = {"ld": "reads", "st": "writes", "atom": "atomically updates"}[op]
    if bad is not None:
        i = int(np.argmax(bad))
        addr = int(a[i])
        where = (f"global address {addr:#x}, outside every allocation" if space == "global"
                 else f"{space} offset {addr}, outside the {eng.shared_size if space == 'shared' else eng.local_size}"
                 f" bytes of {'this block' if space == 'shared' else 'this thread'}'s {space} memory")
        eng.report("out-of-bounds", inst, lanes[bad],
                   f"{inst.opcode} {verb} {size} bytes at {where} ({inst.file}:{inst.line}); "
                   "check the index against the array's length", address=addr, space=space)
    if mis is not None:
        i = int(np.argmax(mis))
        eng.report("misaligned", inst, lanes[mis],
                   f"{inst.opcode} {verb} {size} bytes at {space} address {int(a[i]):#x}, which is not a "
                   f"multiple of {size} ({inst.file}:{inst.line}); vector and wide accesses need aligned "
                   "pointers", address=int(a[i]), space=space)
    out = bad if bad is not None else np.zeros(len(lanes), bool)
    return out | mis if mis is not None else out


def _gather(t: Target, dt, shift, nvec, n):
    view = t.store.view(dt)
    idx = t.index >> shift
    if nvec == 1:
        v = view[idx]
        if t.bad is not None:
            v = np.where(t.bad, _poison(dt), v)
        return [v]
    out = []
    for k in range(nvec):
        v = view[idx + k]
        if t.bad is not None:
            v = np.where(t.bad, _poison(dt), v)
        out.append(v)
    return out


def _poison(dt):
    return np.frombuffer(bytes([POISON]) * np.dtype(dt).itemsize, dt)[0]


@builder("ld", "ldu", pipe="lsu", family="space")
def ld(eng, inst):
    t = types_of(inst)[-1]
    space = space_of(inst)
    nvec = vec_of(inst)
    dsts = inst.ops[0].items if inst.ops[0].kind == "vec" else (inst.ops[0],)
    puts = [put(eng, inst, o, t) for o in dsts]
    ao = inst.ops[1]
    if space == "param":
        return _ld_param(eng, inst, t, puts, ao)
    dt = np.dtype(NP[t]).newbyteorder("=")
    size = dt.itemsize
    shift = size.bit_length() - 1
    getaddr, const_addr = address(eng, inst, ao, space)

    def run(sel):
        a = getaddr(sel) if getaddr is not None else const_addr
        parts = locate(eng, inst, space, a, sel, size * nvec, size * nvec, "ld")
        if len(parts) == 1:
            vals = _gather(parts[0], dt, shift, nvec, 0)
            for p, v in zip(puts, vals):
                p(sel, v)
            return
        for part in parts:
            sub = _subsel(sel, part.lanes)
            for p, v in zip(puts, _gather(part, dt, shift, nvec, 0)):
                p(sub, v)
    return PLAIN, run


def _kparam_at(eng, at, dt):
    """Kernel-parameter bytes at per-lane offsets into the parameter buffer (an address in a register)."""
    raw = np.frombuffer(eng._params, np.uint8)
    at = np.asarray(at, np.int64).ravel()
    if at.size and (at.min() < 0 or at.max() + dt.itemsize > raw.size):
        raise EmulatorError(f"ld.param outside the {raw.size}-byte kernel parameter buffer")
    return np.ascontiguousarray(raw[at[:, None] + np.arange(dt.itemsize)]).view(dt).ravel()


def _ld_param(eng, inst, t, puts, ao):
    if ao.name in eng.param_offset:  # a kernel parameter: one value for every lane
        vals = [eng.kparam(ao.name, ao.offset + k * np.dtype(NP[t]).itemsize, t) for k in range(len(puts))]

        def run(sel):
            for p, v in zip(puts, vals):
                p(sel, v)
        return PLAIN, run
    dt = np.dtype(NP[t])
    if ao.name in eng.regs and ao.name not in eng.pbuf:  # [%rd+8]: %rd holds a kernel parameter's address
        addr = eng.view(ao.name, "u64")

        def run_at(sel):
            for k, p in enumerate(puts):
                p(sel, _kparam_at(eng, addr[sel].astype(np.int64) + ao.offset + k * dt.itemsize, dt))
        return PLAIN, run_at
    buf = eng.pbuf[ao.name]

    def run(sel):
        for k, p in enumerate(puts):
            at = ao.offset + k * dt.itemsize
            p(sel, np.ascontiguousarray(buf[sel, at:at + dt.itemsize]).view(dt).ravel())
    return PLAIN, run


@builder("st", pipe="lsu", family="space")
def st(eng, inst):
    t = types_of(inst)[-1]
    space = space_of(inst)
    nvec = vec_of(inst)
    srcs_ops = inst.ops[1].items if inst.ops[1].kind == "vec" else (inst.ops[1],)
    srcs = [get(eng, inst, o, t) for o in srcs_ops]
    ao = inst.ops[0]
    dt = np.dtype(NP[t])
    size = dt.itemsize
    if space == "param":
        buf = eng.pbuf[ao.name]

        def run(sel):
            for k, s in enumerate(srcs):
                at = ao.offset + k * size
                n = _count(sel)
                v = np.ascontiguousarray(np.broadcast_to(np.asarray(s(sel), dt), (n,)))
                buf[sel, at:at + size] = v.view(np.uint8).reshape(n, size)
        return PLAIN, run
    shift = size.bit_length() - 1
    getaddr, const_addr = address(eng, inst, ao, space)

    def run(sel):
        a = getaddr(sel) if getaddr is not None else const_addr
        vals = [s(sel) for s in srcs]
        parts = locate(eng, inst, space, a, sel, size * nvec, size * nvec, "st",
                       vals if eng.observer is not None else None)
        for part in parts:
            view = part.store.view(dt)
            idx = part.index >> shift
            keep = None if part.bad is None else ~part.bad
            for k, v in enumerate(vals):
                if part.lanes is not None and np.ndim(v):
                    v = v[part.lanes]
                if keep is not None:
                    v = v[keep] if np.ndim(v) else v
                    view[idx[keep] + k] = v
                else:
                    view[idx + k if k else idx] = v
    return PLAIN, run


@builder("prefetch", pipe="lsu")
@builder("prefetchu", "discard", "applypriority", "createpolicy")
def hint(eng, inst):
    """Cache hints change nothing a program can observe."""
    if inst.op == "createpolicy":
        d = put(eng, inst, inst.ops[0], "b64")

        def run(sel):
            d(sel, np.uint64(0))
        return PLAIN, run
    return PLAIN, lambda sel: None


__all__ = ["ld", "st", "locate", "address", "space_of", "bits"]
