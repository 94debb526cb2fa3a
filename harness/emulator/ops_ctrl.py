"""Control flow and synchronisation: bra, exit/ret, call, bar.sync/bar.arrive/barrier, trap, and the
instructions that only order memory (membar, fence), which a sequential emulator already honours.

The builders here only tell the engine what kind of instruction it is; the engine's scheduler
does the work (splitting groups at branches, parking lanes at barriers, the call stack).
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .ops import BARRIER, BRANCH, CALL, EXIT, PLAIN, RET, builder, get, put


def _nothing(sel):
    return None


@builder("bra", pipe="branch")
def bra(eng, inst):
    if inst.target is None:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    return BRANCH, _nothing


@builder("exit", pipe="branch")
def exit_(eng, inst):
    return EXIT, _nothing


@builder("ret", pipe="branch")
def ret(eng, inst):
    fn = eng.module.functions[inst.func]
    return (EXIT if fn.entry else RET), _nothing


@builder("bar", "barrier", pipe="other")
def bar(eng, inst):
    mods = inst.mods
    if "warp" in mods:  # bar.warp.sync mask: __syncwarp
        from .ops_warp import warp_sync_builder
        return warp_sync_builder(eng, inst)
    if "arrive" in mods:
        return _bar_arrive(eng, inst)
    if "red" in mods:
        return _bar_red(eng, inst)
    ops = inst.ops
    if ops and ops[0].kind != "imm":
        raise UnsupportedPTX(inst.opcode + " with a register barrier id", inst.file, inst.line)
    bid = ops[0].value if ops else 0
    count = ops[1].value if len(ops) > 1 and ops[1].kind == "imm" else None
    inst.aux = (bid, count)
    return BARRIER, _nothing


def _bar_arrive(eng, inst):
    """bar.arrive id, count (barrier.arrive): the producer's half of a named barrier. Its threads
    count towards barrier `id` and go on; the threads waiting at a bar.sync id, count are released
    once `count` threads (arrivals and waiters) have come (FlashAttention-3's warpgroup ping-pong,
    a producer warp handing a buffer to consumer warps)."""
    ops = inst.ops
    if len(ops) < 2 or ops[0].kind != "imm" or ops[1].kind != "imm":
        raise UnsupportedPTX(inst.opcode + " without an immediate barrier id and thread count", inst.file, inst.line)
    bid, count = int(ops[0].value), int(ops[1].value)
    inst.aux = (bid, count)

    def run(sel):
        idx = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)
        if idx.size == 0:
            return
        eng.arrived[bid] = eng.arrived.get(bid, np.zeros(eng.R, np.int64)) + np.bincount(
            eng.lane_slot[idx], minlength=eng.R)
        eng._check_barriers(np.unique(eng.lane_slot[idx]))

    return PLAIN, run


def _bar_red(eng, inst):
    """bar.red.{popc,and,or} d, id, p (__syncthreads_count/and/or). The engine calls run with
    all lanes a completed barrier releases: the reduction is over each block's arrived lanes."""
    op = next(m for m in inst.mods if m in ("popc", "and", "or"))
    o = inst.ops
    if o[1].kind != "imm":
        raise UnsupportedPTX(inst.opcode + " with a register barrier id", inst.file, inst.line)
    d = put(eng, inst, o[0], "u32" if op == "popc" else "pred")
    p = get(eng, inst, o[-1], "pred")
    neg = o[-1].value == "not"
    inst.aux = (o[1].value, None)

    def run(sel):
        pv = np.asarray(p(sel))
        pv = ~pv if neg else pv
        slot = eng.lane_slot[sel]
        count = np.bincount(slot, weights=pv, minlength=eng.R)
        total = np.bincount(slot, minlength=eng.R)
        if op == "popc":
            d(sel, count[slot].astype(np.uint32))
        elif op == "and":
            d(sel, count[slot] == total[slot])
        else:
            d(sel, count[slot] > 0)
    return BARRIER, run


@builder("call", pipe="branch")
def call(eng, inst):
    rets, name, args = inst.aux[:3]
    fns = eng.module.functions
    from .externs import EXTERNS

    if name in EXTERNS and (name not in fns or fns[name].end <= fns[name].start):
        return EXTERNS[name](eng, inst, rets, args)
    if name not in fns or fns[name].end <= fns[name].start:
        raise UnsupportedPTX(f"call of {name}", inst.file, inst.line)
    fn = fns[name]
    inst.target = fn.start
    pairs = [(eng.pbuf[a], eng.pbuf[f"{name}::{p.name}"]) for a, p in zip(args, fn.params)]
    backs = [(eng.pbuf[f"{name}::{p.name}"], eng.pbuf[r]) for r, p in zip(rets, fn.rets)]

    def run(sel):
        for src, dst in pairs:
            w = min(src.shape[1], dst.shape[1])
            dst[sel, :w] = src[sel, :w]

    def copy_back(sel, callee):
        for src, dst in backs:
            w = min(src.shape[1], dst.shape[1])
            dst[sel, :w] = src[sel, :w]
    inst.aux = (rets, name, args, copy_back)
    return CALL, run


@builder("membar", "fence", pipe="other")
@builder("nanosleep", "pmevent")
def ordering(eng, inst):
    obs = eng.observer
    if obs is not None and inst.op in ("membar", "fence") and "cta" not in inst.mods:
        # the sanitizer's global-race shadow: a fence publishes the block's earlier writes
        def run(sel):
            obs.on_fence(inst, eng.lane_block[sel], eng.lane_tid[sel])
        return PLAIN, run
    return PLAIN, _nothing


@builder("trap", "brkpt")
def trap(eng, inst):
    """__trap() or a failed assert(): the launch stops with a finding, as the GPU's would fail."""
    def run(sel):
        lanes = np.arange(sel.start, sel.stop) if isinstance(sel, slice) else sel
        eng.report("trap", inst, lanes, f"the kernel executed a trap at {inst.file}:{inst.line} "
                   "(__trap() or a failed assert()); the launch was aborted")
        eng.stopped = True
    return EXIT, run


__all__ = ["np"]
