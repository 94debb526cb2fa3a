"""Straight runs of f32 register arithmetic (fma, mul, add, sub with .rn), run as one compiled
pass instead of one numpy step per instruction.

Triton's fp32 `tl.dot` (input_precision="ieee") compiles to blocks of a thousand `fma.rn.f32` on
registers, one per (output, k) pair of a thread's tile, and numba's and NVRTC's inner loops have
shorter runs. Per instruction the numpy path costs a few microseconds of dispatch whatever the
lane count; a run costs one call of the numba kernel below, which executes the instructions in
program order, each for every lane, exactly as the engine would: so dependencies inside the run
(an accumulator chain) need no analysis, and the arithmetic is the numpy path's (float32 add,
sub and mul; fma through float64, rounded once to float32, see ops_float). Only unguarded
instructions whose operands are 32-bit registers or immediates join a run, and the engine uses a
run only where no other lane group waits inside it, without observers that want on_issue (the
counters) taking one call per instruction as before, and never across a watchdog check.
"""
from __future__ import annotations

import numpy as np

from .ops_float import _mode

MIN_RUN = 4  # shorter runs cost more in the call than they save
_CODES = {"fma": 0, "mad": 0, "mul": 1, "add": 2, "sub": 3}


def _fusable(inst) -> bool:
    if inst.guard or inst.op not in _CODES or len(inst.ops) != (4 if _CODES[inst.op] == 0 else 3):
        return False
    mods = inst.mods
    if "f32" not in mods or "sat" in mods or _mode(inst) != "rn" or any(m in mods for m in ("f16", "f64", "x2")):
        return False
    return True


def attach(eng, code_used) -> None:
    """Give each instruction of a run of MIN_RUN or more fusable ones `batch = (run, offset)`;
    every other instruction gets None. Rows index the launch's 32-bit register file, whose layout
    depends only on the kernel, so the runs are found once per kernel of a loaded module."""
    if _run_kernel is None or getattr(eng, "file32", None) is None:
        for inst in code_used:
            inst.batch = None
        return
    cache = eng.module.__dict__.setdefault("_fused_runs", {})
    key = (eng.kernel.name, len(code_used), len(eng.row32), MIN_RUN)
    batches = cache.get(key)
    if batches is None:
        _find(eng, code_used)
        batches = cache[key] = [inst.batch for inst in code_used]
    for inst, b in zip(code_used, batches):
        inst.batch = b


def bind_lazily(eng, inst) -> None:
    """A fused instruction usually runs inside its run: bind its own closure (ops.bind, costly per
    instruction for a thousand of them) only when it first runs alone."""
    from .ops import PLAIN, bind

    def first(sel):
        bind(eng, inst)
        inst.run(sel)
    inst.kind, inst.run = PLAIN, first


def _find(eng, code_used) -> None:
    rows = eng.row32
    runs, cur = [], []
    prev = None
    for inst in code_used:
        inst.batch = None
        item = _encode(eng, inst, rows) if _fusable(inst) else None
        if item is None or prev is None or inst.pc != prev + 1:
            if len(cur) >= MIN_RUN:
                runs.append(cur)
            cur = [] if item is None else [(inst, item)]
        else:
            cur.append((inst, item))
        prev = inst.pc if item is not None else None
    if len(cur) >= MIN_RUN:
        runs.append(cur)
    for run in runs:
        n = len(run)
        code = np.array([it[0] for _, it in run], np.int64)
        regs = np.array([it[1] for _, it in run], np.int64).reshape(n, 4)
        consts = np.array([it[2] for _, it in run], np.float64).reshape(n, 3)
        shared = (code, regs, consts, n)
        for j, (inst, _) in enumerate(run):
            inst.batch = (shared, j)


def _encode(eng, inst, rows):
    """(op code, [dst, a, b, c] rows (-1: an immediate), [a, b, c] immediates) or None."""
    from .ops import get

    ops = inst.ops
    d = ops[0]
    if d.kind != "reg" or d.name not in rows:
        return None
    regs, consts = [rows[d.name]], []
    for o in ops[1:]:
        if o.kind == "reg":
            if o.name not in rows:
                return None
            regs.append(rows[o.name])
            consts.append(0.0)
        elif o.kind in ("imm", "fimm"):
            regs.append(-1)
            consts.append(float(get(eng, inst, o, "f32")(None)))
        else:
            return None
    while len(regs) < 4:
        regs.append(-1)
        consts.append(0.0)
    return _CODES[inst.op], regs, consts


def run(eng, batch, sel, count: int) -> None:
    """Execute `count` instructions of the run from `batch`'s offset for the lanes sel."""
    (code, regs, consts, _), j = batch
    f = eng.file32f
    if isinstance(sel, slice):
        _run_kernel(f, code, regs, consts, j, j + count, sel.start, sel.stop, _NO_LANES)
    else:
        _run_kernel(f, code, regs, consts, j, j + count, 0, 0, sel)


_NO_LANES = np.zeros(0, np.int64)


CHUNK = 256  # lanes per pass over the run: their rows of the run's registers stay in cache


def _kernel(f, code, regs, consts, j0, j1, start, stop, lanes):
    some = lanes.shape[0] > 0  # an index array of lanes, else the range start:stop
    n = lanes.shape[0] if some else stop - start
    for c0 in range(0, n, CHUNK):  # lanes are independent: each chunk runs the whole run in order
        c1 = min(n, c0 + CHUNK)
        for j in range(j0, j1):
            op = code[j]
            d, ra, rb, rc = regs[j, 0], regs[j, 1], regs[j, 2], regs[j, 3]
            if not some and ra >= 0 and rb >= 0 and (op != 0 or rc >= 0):  # the usual case: rows
                fd, fa, fb = f[d], f[ra], f[rb]
                lo, hi = start + c0, start + c1
                if op == 0:
                    fc = f[rc]
                    for i in range(lo, hi):
                        fd[i] = np.float32(np.float64(fa[i]) * np.float64(fb[i]) + np.float64(fc[i]))
                elif op == 1:
                    for i in range(lo, hi):
                        fd[i] = fa[i] * fb[i]
                elif op == 2:
                    for i in range(lo, hi):
                        fd[i] = fa[i] + fb[i]
                else:
                    for i in range(lo, hi):
                        fd[i] = fa[i] - fb[i]
                continue
            ca, cb, cc = np.float32(consts[j, 0]), np.float32(consts[j, 1]), np.float32(consts[j, 2])
            for i in range(c0, c1):
                lane = lanes[i] if some else start + i
                a = f[ra, lane] if ra >= 0 else ca
                b = f[rb, lane] if rb >= 0 else cb
                if op == 0:
                    c = f[rc, lane] if rc >= 0 else cc
                    f[d, lane] = np.float32(np.float64(a) * np.float64(b) + np.float64(c))
                elif op == 1:
                    f[d, lane] = a * b
                elif op == 2:
                    f[d, lane] = a + b
                else:
                    f[d, lane] = a - b


try:
    import numba

    _run_kernel = numba.njit(cache=True)(_kernel)
except ImportError:  # without numba every instruction runs through its numpy closure
    _run_kernel = None
