"""Asynchronous copies global -> shared: cp.async.{ca,cg} with commit_group, wait_group N, wait_all.

`cp.async.ca.shared.global [dst], [src], 4|8|16{, src-size | ignore-src}` (.cg: 16 only) reads its
source when it issues (a legal moment: PTX only promises the data by the wait) through the
checked global path, but writes shared memory only when the issuing thread waits for its group:
`cp.async.wait_group N` completes every group but the newest N committed ones, `wait_all` every
copy. Until then the destination keeps its old bytes, as on a GPU where the copy may still be in
flight, so a kernel that reads before its wait computes with stale data here too, and the
sanitizer (async_check.py) names the read. The store at completion goes through the checked
shared path as the cp.async's own access (its line; bounds, races and counters as for st.shared).
Bytes past src-size are zero; a src-size of 0 (or ignore-src true) reads nothing, so the
zero-fill idiom for rows past a matrix's edge may pass any pointer.

Groups are per thread: a copy belongs to the group its thread commits next. Copies of a block
that exits before waiting are dropped with it.
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .ops import PLAIN, builder, get
from .ops_mem import _gather, address, locate


class _State:
    """Per launch: committed groups per lane and the copies not yet landed, in issue order."""

    def __init__(self, eng):
        self.committed = np.zeros(eng.N, np.int64)
        self.copies: list[tuple] = []  # (inst, lanes, blocks, group, dst offsets, bytes (n, size))


def _state(eng) -> _State:
    st = getattr(eng, "async_copies", None)
    if st is None:
        st = eng.async_copies = _State(eng)
    return st


def _lanes(sel) -> np.ndarray:
    return np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)


@builder("cp", pipe="lsu")
def cp(eng, inst):
    mods = inst.mods
    if not mods or mods[0] != "async":
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    if "commit_group" in mods:
        def commit(sel):
            _state(eng).committed[sel] += 1
        return PLAIN, commit
    if "wait_group" in mods or "wait_all" in mods:
        keep = None if "wait_all" in mods else int(inst.ops[0].value)

        def wait(sel):
            st = getattr(eng, "async_copies", None)
            if st is not None and st.copies:
                _complete(eng, st, _lanes(sel), keep)
        return PLAIN, wait
    if len(mods) < 3 or mods[1] not in ("ca", "cg") or "bulk" in mods or "mbarrier" in mods:
        raise UnsupportedPTX(inst.opcode + " (only cp.async.ca/.cg shared<-global and its groups)",
                             inst.file, inst.line)
    return _copy(eng, inst)


def _copy(eng, inst):
    o = inst.ops
    if any(m.startswith("L2::cache_hint") for m in inst.mods):  # a trailing cache-policy operand
        o = o[:-1]
    size = int(o[2].value) if o[2].kind == "imm" else 0
    if size not in ((16,) if inst.mods[1] == "cg" else (4, 8, 16)):
        raise UnsupportedPTX(f"{inst.opcode} with {size} bytes", inst.file, inst.line)
    dget, dconst = address(eng, inst, o[0], "shared")
    sget, sconst = address(eng, inst, o[1], "global")
    srcsize = ignore = None
    if len(o) > 3 and o[3].kind in ("reg", "imm"):
        if o[3].kind == "reg" and o[3].name in eng.regs and eng.regs[o[3].name].dtype == np.bool_:
            ignore = get(eng, inst, o[3], "pred")
        else:
            srcsize = get(eng, inst, o[3], "u32")
    obs = eng.observer

    def run(sel):
        lanes = _lanes(sel)
        n = lanes.size
        dst = np.asarray(dget(sel) if dget is not None else np.full(n, dconst)).astype(np.int64)
        src = np.asarray(sget(sel) if sget is not None else np.full(n, sconst)).astype(np.uint64)
        dst = np.broadcast_to(dst, n)
        if srcsize is not None:
            have = np.broadcast_to(np.minimum(np.asarray(srcsize(sel)).astype(np.int64), size), n)
        elif ignore is not None:
            have = np.where(np.broadcast_to(np.asarray(ignore(sel)), n), 0, size)
        else:
            have = np.full(n, size, np.int64)
        data = np.zeros((n, size), np.uint8)
        whole = bool((have == size).all())  # the usual case: every lane copies all its bytes
        for v in ([size] if whole else np.unique(have).tolist()):
            if v <= 0:
                continue
            part = None if whole else np.flatnonzero(have == v)
            align = v if v & (v - 1) == 0 else 1
            for t in locate(eng, inst, "global", src if whole else src[part], lanes if whole else lanes[part],
                            v, align, "ld"):
                rows = (slice(None) if t.lanes is None else t.lanes) if whole else \
                    (part if t.lanes is None else part[t.lanes])
                data[rows, :v] = _bytes(t, v)
        if obs is not None and hasattr(obs, "on_async_copy"):
            obs.on_async_copy(inst, eng.lane_block[lanes], eng.lane_tid[lanes], dst.astype(np.uint64), size)
        st = _state(eng)
        st.copies.append((inst, lanes, eng.lane_block[lanes].copy(), st.committed[lanes].copy(), dst.copy(),
                          data))
    return PLAIN, run


def _bytes(t, v: int) -> np.ndarray:
    """The v bytes at each lane's source, (lanes, v): whole 4-byte words when every lane's address
    is in bounds and 4-byte aligned (the bounds check reported the others), else byte by byte."""
    if t.bad is None and v % 4 == 0 and not int(np.bitwise_or.reduce(t.index)) & 3:
        idx = t.index >> 2
        words = t.store.view(np.uint32)[idx[:, None] + np.arange(v // 4)] if v > 4 else t.store.view(np.uint32)[idx][:, None]
        return np.ascontiguousarray(words).view(np.uint8)
    return np.stack(_gather(t, np.uint8, 0, v, 0), axis=1)


def _complete(eng, st: _State, lanes: np.ndarray, keep: int | None) -> None:
    """Land the copies of these lanes that their wait covers, oldest first."""
    waiting = np.zeros(eng.N, bool)
    waiting[lanes] = True
    rest = []
    for inst, ls, blocks, group, dst, data in st.copies:
        alive = eng.lane_block[ls] == blocks  # a lane of a block that exited: its copies are gone
        due = alive & waiting[ls]
        if keep is not None:
            due &= group < st.committed[ls] - keep
        if due.any():
            _land(eng, inst, ls[due], dst[due], data[due])
        left = alive & ~due
        if left.all():
            rest.append((inst, ls, blocks, group, dst, data))
        elif left.any():
            rest.append((inst, ls[left], blocks[left], group[left], dst[left], data[left]))
    st.copies = rest


def _land(eng, inst, lanes, dst, data) -> None:
    size = data.shape[1]
    for t in locate(eng, inst, "shared", dst, lanes, size, size, "st"):
        rows = np.arange(lanes.size) if t.lanes is None else t.lanes
        idx, d = t.index, data[rows]
        if t.bad is not None:
            idx, d = idx[~t.bad], d[~t.bad]
            t.store.view(np.uint8)[idx[:, None] + np.arange(size)] = d
        elif size % 4 == 0 and not int(np.bitwise_or.reduce(idx)) & 3:  # in bounds, aligned: words
            words = np.ascontiguousarray(d).view(np.uint32)
            t.store.view(np.uint32)[(idx >> 2)[:, None] + np.arange(size // 4)] = words
        else:
            t.store.view(np.uint8)[idx[:, None] + np.arange(size)] = d


__all__ = ["cp"]
