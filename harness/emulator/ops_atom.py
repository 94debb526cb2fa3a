"""Atomics (atom) and reductions (red) on global and shared memory, exact under any contention.

The lanes of one issued group update memory in a legal serial order: sorted by address, then by
lane. Lanes hitting distinct addresses update in one numpy step. Where several lanes hit one
address, associative operations (add, min, max, and, or, xor) use a running accumulate over that
address's lanes (float adds accumulate sequentially in the value's own precision, so the result is
exactly that of some serial order); exch hands each lane its predecessor's value; cas, inc and dec
are replayed lane by lane in rounds, since each step depends on the last.
"""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

from .findings import UnsupportedPTX
from .ops import NP, PLAIN, builder, get, put, types_of
from .ops_float import pack2, unpack2
from .ops_mem import address, locate, space_of

HEAVY = 32  # lanes on one address above which that address is accumulated in one call

_UFUNC = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}


def _segments(si):
    n = si.size
    start = np.ones(n, bool)
    start[1:] = si[1:] != si[:-1]
    starts = np.flatnonzero(start)
    seg = np.cumsum(start) - 1
    counts = np.diff(np.append(starts, n))
    return starts, seg, counts, np.arange(n) - starts[seg]


def serial(view, idx, vals, step, ufunc=None, cas_cmp=None):
    """Apply `new = step(old, val[, cmp])` for each lane in lane order per address; returns each
    lane's old value. idx: element indices into view (lane order)."""
    n = idx.size
    order = np.argsort(idx, kind="stable")
    si, sv = idx[order], vals[order]
    sc = cas_cmp[order] if cas_cmp is not None else None
    old_sorted = np.empty(n, view.dtype)
    starts, seg, counts, rank = _segments(si)
    if starts.size == n:  # no two lanes share an address
        cur = view[si]
        old_sorted[:] = cur
        view[si] = step(cur, sv) if sc is None else step(cur, sv, sc)
    elif ufunc is np.add and view.dtype.kind in "iu":  # integer adds: a prefix sum per address
        sv = sv.astype(view.dtype, copy=False)  # (exact and wrapping, so any order gives these bits)
        cur = view[si]
        cs = np.cumsum(sv, dtype=view.dtype)
        before = cs - sv  # the sum of the lanes sorted before each, over all addresses
        old_sorted[:] = cur + (before - before[starts][seg])
        view[si[starts]] = cur[starts] + (cs[starts + counts - 1] - before[starts])
    else:
        light = counts[seg] <= HEAVY
        if ufunc is not None:
            for s, c in zip(starts[counts > HEAVY].tolist(), counts[counts > HEAVY].tolist()):
                acc = ufunc.accumulate(np.concatenate(([view[si[s]]], sv[s:s + c])).astype(view.dtype))
                old_sorted[s:s + c] = acc[:-1]
                view[si[s]] = acc[-1]
        else:
            light = np.ones(n, bool)
            for s, c in zip(starts[counts > HEAVY].tolist(), counts[counts > HEAVY].tolist()):
                a = si[s]
                cur = view[a]
                for k in range(s, s + c):  # one address, many lanes: a plain serial replay
                    old_sorted[k] = cur
                    cur = step(cur, sv[k]) if sc is None else step(cur, sv[k], sc[k])
                view[a] = cur
                light[s:s + c] = False
        for r in range(int(rank[light].max()) + 1 if light.any() else 0):
            m = light & (rank == r)
            cur = view[si[m]]
            old_sorted[m] = cur
            view[si[m]] = step(cur, sv[m]) if sc is None else step(cur, sv[m], sc[m])
    old = np.empty(n, view.dtype)
    old[order] = old_sorted
    return old


def _step(op, t):
    if t in ("f16x2", "bf16x2"):
        bf = t == "bf16x2"

        def add2(old, v):
            a, b = unpack2(old, bf), unpack2(v, bf)
            return pack2(a[0] + b[0], a[1] + b[1], bf).astype(np.uint32)
        return add2, None
    if op in _UFUNC:
        uf = _UFUNC[op]
        if t[0] == "f" and op in ("min", "max"):
            uf = np.fmin if op == "min" else np.fmax
        return uf, uf
    if op == "exch":
        return (lambda old, v: v), None
    if op == "cas":
        return (lambda old, cmp_unused, new=None: old), None
    if op == "inc":
        return (lambda old, v: np.where(old >= v, 0, old + 1).astype(old.dtype)), None
    if op == "dec":
        return (lambda old, v: np.where((old == 0) | (old > v), v, old - 1).astype(old.dtype)), None
    raise KeyError(op)


def _cas(old, cmp, new):
    return np.where(old == cmp, new, old).astype(np.asarray(old).dtype)


@builder("atom", "red", pipe="lsu", family="space")
def atom(eng, inst):
    mods = inst.mods
    op = next((m for m in mods if m in ("add", "min", "max", "and", "or", "xor", "exch", "cas", "inc", "dec")), None)
    ts = types_of(inst)
    if op is None or not ts or "v2" in mods or "v4" in mods or "v8" in mods:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    t = ts[-1]
    space = space_of(inst)
    is_red = inst.op == "red"
    ops = inst.ops
    d = None if is_red else put(eng, inst, ops[0], t)
    # under a schedule, an atomic whose old value the kernel reads is noted when the order moves it
    noted = d if eng.schedule is not None and d is not None and _value_read(eng, inst, ops[0]) else None
    ao, vals_ops = (ops[0], ops[1:]) if is_red else (ops[1], ops[2:])
    getaddr, const_addr = address(eng, inst, ao, space)
    b = get(eng, inst, vals_ops[0], t)
    c = get(eng, inst, vals_ops[1], t) if op == "cas" else None
    dt = np.dtype(NP[t])
    size = dt.itemsize
    shift = size.bit_length() - 1
    if op == "cas":
        step, uf = (lambda old, new, cmp: _cas(old, cmp, new)), None
    else:
        step, uf = _step(op, t)

    def run(sel):
        a = getaddr(sel) if getaddr is not None else const_addr
        parts = locate(eng, inst, space, a, sel, size, size, "atom")
        bv = np.broadcast_to(np.asarray(b(sel), dt), (_n(sel),))
        cv = np.broadcast_to(np.asarray(c(sel), dt), (_n(sel),)) if c is not None else None
        for part in parts:
            lanes = part.lanes
            x = bv if lanes is None else bv[lanes]
            y = None if cv is None else (cv if lanes is None else cv[lanes])
            idx = part.index >> shift
            good = None if part.bad is None else ~part.bad
            view = part.store.view(dt)
            if good is not None:
                old = np.full(idx.size, np.frombuffer(b"\xff" * size, dt)[0], dt)
                if op == "cas":  # cas(old, cmp=b, new=c): serial() passes (vals=new, cmp)
                    old[good] = arrive(eng, inst, view, idx[good], y[good], step, None, x[good], noted)
                else:
                    old[good] = arrive(eng, inst, view, idx[good], x[good], step, uf, None, noted)
            elif op == "cas":
                old = arrive(eng, inst, view, idx, y, step, None, x, noted)
            else:
                old = arrive(eng, inst, view, idx, x, step, uf, None, noted)
            if d is not None:
                d(sel if lanes is None else (lanes + sel.start if isinstance(sel, slice) else sel[lanes]), old)
    return PLAIN, run


def arrive(eng, inst, view, idx, vals, step, ufunc, cas_cmp, dest):
    """serial() in the launch's arrival order: lane order, or the schedule's (schedule.py), which
    notes the atomics whose returned values it changed."""
    sch = eng.schedule
    if sch is None:
        return serial(view, idx, vals, step, ufunc, cas_cmp)
    p = sch.arrival(idx.size)
    old = np.empty(idx.size, view.dtype)
    old[p] = serial(view, idx[p], vals[p], step, ufunc, None if cas_cmp is None else cas_cmp[p])
    if dest is not None:
        sch.note_atomic(inst, idx)
    return old


def _value_read(eng, inst, dest) -> bool:
    """Whether another instruction of the atomic's function names its destination register (NVRTC
    keeps a destination on some atomics whose old value nothing uses). One count of the register
    names of each function per launch, shared by its atomics."""
    name = (getattr(dest, "name", None) or "").rpartition("::")[2]  # names are qualified by function
    fn = eng.module.functions.get(inst.func)
    if not name or fn is None:
        return True
    counts = eng.__dict__.setdefault("_register_mentions", {})
    mentions = counts.get(inst.func)
    if mentions is None:
        mentions = counts[inst.func] = Counter(r for i in eng.code[fn.start:fn.end] for r in _REG.findall(i.text or ""))
    return mentions[name] > 1  # the atomic itself names it once


_REG = re.compile(r"%[\w$]+")


def _n(sel):
    return sel.stop - sel.start if isinstance(sel, slice) else sel.size
