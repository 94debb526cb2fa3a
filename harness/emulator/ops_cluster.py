"""Thread-block clusters (sm_90) as the emulator runs them: clusters of one block.

A launch here has no cluster dimensions, so every block is a cluster of one, as on a GPU launched
without them: %clusterid is %ctaid, %cluster_ctarank 0, %cluster_nctarank 1 (lanes.py),
`barrier.cluster.arrive` + `barrier.cluster.wait` synchronise the block like __syncthreads(),
and `mapa` of rank 0 maps a shared address to itself. A shared::cluster address names its CTA's
rank in bits 24 and up (rank + 1; 0 is the executing CTA), so `mapa` to another rank and an
access through it are reported as an out-of-range rank, never a silent wrong answer.
`setmaxnreg.{inc,dec}.sync.aligned.u32 N` only checks N (24..256, a multiple of 8): registers
are not a resource the emulator runs out of.
"""
from __future__ import annotations

import numpy as np

from . import ops as _ops
from . import ops_atom, ops_ctrl, ops_mem  # noqa: F401  (the builders this module routes from)
from .findings import UnsupportedPTX
from .ops import BARRIER, PLAIN, builder, get, put

CLUSTER_BARRIER = 16  # a barrier id above bar.sync's 0..15, for barrier.cluster.wait
RANK_SHIFT = 24


def resolve(eng, lanes, offs):
    """(blocks, offsets) for shared::cluster offsets of these lanes: a cluster of one block."""
    offs = np.asarray(offs, np.int64)
    rank = offs >> RANK_SHIFT
    blocks = eng.lane_block[lanes].copy()
    if (rank > 1).any():  # rank + 1 in the high bits; only rank 0 (this block) exists
        raise UnsupportedPTX(f"a shared::cluster address of CTA rank {int(rank.max()) - 1} (clusters of more "
                             "than one block)", None, None)
    return blocks, offs & ((1 << RANK_SHIFT) - 1)


@builder("mapa")
def mapa(eng, inst):
    t = "u64" if "u64" in inst.mods else "u32"
    d, a, r = put(eng, inst, inst.ops[0], t), get(eng, inst, inst.ops[1], t), get(eng, inst, inst.ops[2], "u32")

    def run(sel):
        rank = np.asarray(r(sel)).astype(np.int64)
        if (rank != 0).any():
            raise UnsupportedPTX(f"mapa to CTA rank {int(rank.max())} (clusters of more than one block)",
                                 inst.file, inst.line)
        d(sel, a(sel))
    return PLAIN, run


_base_barrier = _ops.BUILDERS["barrier"]  # bar.sync's family (ops_ctrl): barrier.sync, barrier.arrive


def barrier(eng, inst):
    mods = inst.mods
    if "cluster" not in mods:
        return _base_barrier(eng, inst)
    if "arrive" in mods:
        return PLAIN, lambda sel: None
    if "wait" in mods:
        inst.aux = (CLUSTER_BARRIER, None)
        return BARRIER, lambda sel: None
    raise UnsupportedPTX(inst.opcode, inst.file, inst.line)


@builder("setmaxnreg")
def setmaxnreg(eng, inst):
    n = inst.ops[0].value if inst.ops and inst.ops[0].kind == "imm" else None
    if n is None or not 24 <= n <= 256 or n % 8:
        raise UnsupportedPTX(inst.opcode + " (the register count is an immediate 24..256, a multiple of 8)",
                             inst.file, inst.line)
    return PLAIN, lambda sel: None


_ops.BUILDERS["barrier"] = barrier

__all__ = ["barrier", "mapa", "resolve", "setmaxnreg"]


def _as_shared(base):
    """ld/st/atom/red.shared::cta and .shared::cluster (a cluster of one block: the block's own
    shared memory) run as their .shared forms."""
    from .ptx import Inst

    def routed(eng, inst):
        if not any(m in ("shared::cta", "shared::cluster") for m in inst.mods):
            return base(eng, inst)
        opcode = inst.opcode.replace("shared::cluster", "shared").replace("shared::cta", "shared")
        proxy = Inst(inst.pc, opcode, inst.ops, inst.guard, inst.neg, inst.file, inst.line, inst.func, inst.text)
        proxy.aux, proxy.target = inst.aux, inst.target
        out = base(eng, proxy)
        inst.aux = proxy.aux
        return out
    return routed


for _op in ("ld", "st", "atom", "red"):
    if _op in _ops.BUILDERS:
        _ops.BUILDERS[_op] = _as_shared(_ops.BUILDERS[_op])
