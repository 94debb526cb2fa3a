"""Warpgroup MMA (sm_90a): wgmma.mma_async, wgmma.fence, wgmma.commit_group, wgmma.wait_group.

  wgmma.mma_async.sync.aligned.m64nNk16.f32.{bf16,f16}.{bf16,f16}  d, a-desc|{a regs}, b-desc, scale-d,
                                                                 imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b
  wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32               d, a-desc|{a regs}, b-desc, scale-d, sa, sb
  wgmma.mma_async.sync.aligned.m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2} (the same operands as tf32)
  (.f16 accumulators too for f16 inputs; register A takes no imm-trans-a)

A warpgroup is four consecutive warps; warp w of it owns rows 16w..16w+15 of the 64-row tile, so
each warp computes its rows on its own: D = A·B + (scale-d ? D : 0), the product exact in float64
and rounded once. An fp8 wgmma with f32 accumulators sums as the H200 does (ops_fp8.fp8_sum): every
product of the k32 step is cut toward zero to the multiple of 2^(e - 13), e the exponent of the
largest of them and the accumulator, the cut products and the accumulator are added exactly, and
the sum is cut toward zero to 13 mantissa bits (an "FP22" accumulator: SageAttention2 found it on
Ada and Hopper; DeepSeek-V3 reports "around 14 bits" on the H800). Fitted to the H200's outputs of
the zoo's wgmma_fp8:128B:fp22 case (accumulators near 4096), it gives each of them bit for bit, the
887 of 1024 that differ from a cut of the exact sum among them. The fp8 kernels that pass on the
H200 promote each 128-wide group of k into float32 registers on the CUDA cores (DeepSeek-V3's
recipe); one accumulator across all of K loses about 2^-14 of the sum per step on both.

D's fragment repeats mma.sync's m16n8 C layout for every 8 columns; a register A is mma.sync's
m16n8k16 (k8 tf32, k32 fp8) A fragment of the warp's rows.

Shared-memory operands come from 64-bit matrix descriptors: start address, leading and stride byte
offsets (>> 4 each), and the layout (bits 62-63: 0 interleaved, 1 128-byte, 2 64-byte, 3 32-byte
swizzle), read as CUTLASS's canonical GMMA layouts: K-major ((8,m),(T,2)) rows of 16 bytes
(interleaved) or of the swizzle span, MN-major ((T,n,m),(8,k)), T = 16 bytes of elements; the
swizzle XORs address bits 4.. with bits 7.., as TMA writes them. The results are written at issue;
commit_group / wait_group keep the groups for the sanitizer (hopper_check.py), which reports a store
to a wgmma's shared operands before its wait_group, and a wgmma without a wgmma.fence before it
(first use, or accumulators changed by other instructions since the last wgmma).
"""
from __future__ import annotations

import re

import numpy as np

from . import ops_mbarrier as mb
from . import warpmat as wm
from .findings import UnsupportedPTX
from .ops import PLAIN, WARPSYNC, builder, get
from .ops_fp8 import VALUES, fp8_sum
from .tensormap import swizzle_offsets

_IN = {"bf16": 2, "f16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}
_K = {"bf16": 16, "f16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32}
_SPAN = {0: 0, 1: 128, 2: 64, 3: 32}  # descriptor layout code -> swizzle bytes
_MODE = {0: 0, 1: 3, 2: 2, 3: 1}  # descriptor layout code -> tensormap swizzle mode


class _WarpState:
    __slots__ = ("at_fence", "committed", "ever_fenced", "issued_group", "snapshot")

    def __init__(self):
        self.ever_fenced, self.committed = False, 0
        # The fence rule (_fence_check): a wgmma may accumulate into registers that hold what a wgmma
        # left there (snapshot: accumulator register names -> values) or what they held at the
        # warp's last wgmma.fence (at_fence: wgmma accumulator register row -> values). So one fence
        # after the online softmax's rescale of O covers both S = QKᵀ and O += PV that follow.
        self.snapshot: dict = {}
        self.at_fence: dict = {}


def _ws(eng, block: int, warp: int) -> _WarpState:
    d = eng.__dict__.setdefault("wgmma_warps", {})
    s = d.get((block, warp))
    if s is None:
        s = d[(block, warp)] = _WarpState()
    return s


def _values(raw: np.ndarray, t: str) -> np.ndarray:
    """Element bytes (n, esize) -> float64 values."""
    if t in ("e4m3", "e5m2"):
        return VALUES[t][raw[:, 0].astype(np.int64)]
    if t == "bf16":
        return (raw.copy().view(np.uint16).astype(np.uint32) << 16).view(np.float32).ravel().astype(np.float64)
    if t == "f16":
        return raw.copy().view(np.float16).ravel().astype(np.float64)
    return (raw.copy().view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).ravel().astype(np.float64)


def _offsets(desc: int, rows: int, K: int, esize: int, mn_major: bool) -> np.ndarray:
    """Byte addresses (rows, K) of a rows x K operand (A: M x K; B: N x K) under descriptor desc."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    code = (desc >> 62) & 3
    span = _SPAN[code]
    T = 16 // esize
    mn = np.arange(rows)[:, None]
    k = np.arange(K)[None, :]
    if not mn_major:
        r, mi = mn % 8, mn // 8
        e, kk = k % T, k // T
        if span == 0:
            off = r * 16 + mi * sbo + e * esize + kk * lbo
        else:
            off = r * span + mi * sbo + k * esize
    else:
        kr, kk = k % 8, k // 8
        if span == 0:
            e, mi = mn % T, mn // T
            off = e * esize + mi * sbo + kr * 16 + kk * lbo
        else:
            per = span // esize  # elements of MN in one swizzle row
            inner, mi = mn % per, mn // per
            off = inner * esize + mi * lbo + kr * span + kk * sbo
    return swizzle_offsets((start + off).astype(np.int64), _MODE[code])


def _read(eng, inst, block, addrs, esize, t):
    """Values at these shared byte addresses of a block (out-of-range ones reported, read as 0)."""
    slots = np.flatnonzero(eng.slot_block == block)
    s = eng.shared_size
    buf = eng.win.shared.buf[int(slots[0]) * s:(int(slots[0]) + 1) * s]
    flat = addrs.ravel()
    bad = (flat < 0) | (flat + esize > s)
    if bad.any():
        eng.report("out-of-bounds", inst, np.array([int(slots[0]) * eng.T]),
                   f"a wgmma descriptor reads shared byte offset {int(flat[bad][0])}, past the block's {s} bytes "
                   "(check the descriptor's start address and byte offsets)", address=int(flat[bad][0]),
                   space="shared", once=True)
        flat = np.where(bad, 0, flat)
    raw = buf[flat[:, None] + np.arange(esize)]
    return _values(raw, t).reshape(addrs.shape)


@builder("wgmma", pipe="tensor")
def wgmma(eng, inst):
    mods = inst.mods
    if "fence" in mods:
        return WARPSYNC_OR_PLAIN(eng, inst, _fence)
    if "commit_group" in mods:
        return WARPSYNC_OR_PLAIN(eng, inst, _commit)
    if "wait_group" in mods:
        n = int(inst.ops[0].value)
        return WARPSYNC_OR_PLAIN(eng, inst, lambda eng, w, b, s: _wait(eng, w, b, s, n))
    if "mma_async" not in mods:
        raise UnsupportedPTX(inst.opcode, inst.file, inst.line)
    return _mma(eng, inst)


def WARPSYNC_OR_PLAIN(eng, inst, fn):
    """A warpgroup bookkeeping instruction: fn(eng, warp, block, state) once per warp that runs it."""
    def run(sel):
        lanes = mb.lanes_of(sel)
        keys = np.unique(eng.lane_block[lanes] * 64 + eng.lane_tid[lanes] // 32)
        for k in keys.tolist():
            b, w = k // 64, k % 64
            fn(eng, w, b, _ws(eng, b, w))
    return PLAIN, run


def _fence(eng, w, b, s):
    s.ever_fenced = True
    rows = getattr(eng, "wgmma_acc_rows", None)
    if rows and mb.state(eng).check is not None:  # the sanitizer's: what the accumulators hold now
        lanes = _warp_lanes(eng, b, w)
        s.at_fence = {r: eng.file32[r][lanes].copy() for r in rows}


def _warp_lanes(eng, block: int, warp: int) -> np.ndarray:
    """The lane indices of one warp (lanes are laid out block by block, threads in order)."""
    hit = np.flatnonzero((eng.lane_block == block) & (eng.lane_tid // 32 == warp))
    return hit


def _commit(eng, w, b, s):
    s.committed += 1


def _wait(eng, w, b, s, n):
    st = mb.state(eng)
    if st.check is not None:
        st.check.wgmma_waited(b, w, s.committed - n)


def _mma(eng, inst):
    mods = inst.mods
    shape = next((m for m in mods if re.fullmatch(r"m64n\d+k\d+", m)), None)
    types = [m for m in mods if m in ("f32", "f16") + tuple(_IN)]
    if shape is None or len(types) != 3:
        raise UnsupportedPTX(inst.opcode + " (this form of wgmma)", inst.file, inst.line)
    td, ta, tb = types
    N, K = int(shape[4:shape.index("k")]), int(shape[shape.index("k") + 1:])
    if ta not in _IN or tb not in _IN or K != _K[ta] or N % 8 or not 8 <= N <= 256 or td not in ("f32", "f16") \
            or (td == "f16" and ta not in ("f16", "e4m3", "e5m2")):
        raise UnsupportedPTX(inst.opcode + f" (shape {shape} with {ta}/{tb} -> {td})", inst.file, inst.line)
    o = inst.ops
    d_regs = o[0].items if o[0].kind == "vec" else (o[0],)
    per = 1 if td == "f32" else 2
    if len(d_regs) * per != N // 2:
        raise UnsupportedPTX(inst.opcode + f" (m64n{N} takes {N // 2 // per} accumulator registers)",
                             inst.file, inst.line)
    reg_a = o[1].kind == "vec"
    dviews = [eng.view(r.name, "b32") for r in d_regs]
    dkey = tuple(r.name for r in d_regs)
    drows = [eng.row32.get(r.name) for r in d_regs]
    if all(r is not None for r in drows):  # registered for the fences' snapshots
        eng.wgmma_acc_rows = sorted(set(getattr(eng, "wgmma_acc_rows", ())) | set(drows))
    else:
        drows = None
    aget = [get(eng, inst, r, "b32") for r in o[1].items] if reg_a else get(eng, inst, o[1], "u64")
    bget = get(eng, inst, o[2], "u64")
    scale_d = get(eng, inst, o[3], "pred") if o[3].kind == "reg" else (lambda sel, v=bool(o[3].value): v)
    imms = [int(x.value) for x in o[4:]]
    sa, sb = (imms + [1, 1])[:2]
    two_byte = ta in ("bf16", "f16")
    ta_t = imms[2] if two_byte and not reg_a and len(imms) > 2 else 0
    tb_t = (imms[3] if not reg_a else imms[2]) if two_byte and len(imms) > (3 if not reg_a else 2) else 0
    ea, eb = _IN[ta], _IN[tb]
    amap = _a_map(ta)
    fp8_f32 = ta in ("e4m3", "e5m2") and td == "f32"
    inst.aux = None

    def run(sel):
        w = wm.Warps(eng, sel)
        st = mb.state(eng)
        lane0 = w.table[:, 0]
        bdesc = np.asarray(bget(w.table.ravel())).reshape(w.table.shape)
        dregs = np.stack([v[w.table] for v in dviews], axis=-1)  # (warps, 32, nregs)
        sd = np.broadcast_to(np.asarray(scale_d(w.table.ravel())), w.table.size).reshape(w.table.shape)
        if reg_a:
            araw = [np.asarray(g(w.table.ravel())).reshape(w.table.shape) for g in aget]
        else:
            adesc = np.asarray(aget(w.table.ravel())).reshape(w.table.shape)
        for i in range(w.n):
            lanes = w.table[i]
            block, warp = int(eng.lane_block[lane0[i]]), int(eng.lane_tid[lane0[i]] // 32)
            quarter = warp % 4
            ws = _ws(eng, block, warp)
            ranges = []
            baddr = _offsets(int(bdesc[i, 0]), N, K, eb, bool(tb_t))
            B = _read(eng, inst, block, baddr, eb, tb).T * sb  # (K, N)
            ranges.append((int(baddr.min()), int(baddr.max()) + eb))
            if reg_a:
                A = _reg_a([r[i] for r in araw], ta, amap) * sa
            else:
                aaddr = _offsets(int(adesc[i, 0]), 64, K, ea, bool(ta_t))[16 * quarter:16 * quarter + 16]
                A = _read(eng, inst, block, aaddr, ea, ta) * sa
                ranges.append((int(aaddr.min()), int(aaddr.max()) + ea))
            acc = _unpack_d(dregs[i], td)
            if st.check is not None:
                _fence_check(eng, inst, ws, lanes, dregs[i], bool(sd[i, 0]), dkey, drows)
                st.check.wgmma_reads(inst, block, eng.lane_tid[lanes], ranges)
                st.check.wgmma_issued(block, warp, ws.committed, ranges, inst.line)
            base = acc if sd[i, 0] else np.zeros_like(acc)
            out = fp8_sum(A, B, base) if fp8_f32 else A @ B + base
            raw = _pack_d(out, td)
            for r, v in enumerate(dviews):
                v[lanes] = raw[:, r]
            ws.snapshot[dkey] = raw.copy()
    return WARPSYNC, run


def _fence_check(eng, inst, ws, lanes, regs, accumulate, dkey, drows):
    """regs: (32, nregs) the accumulator's values as this wgmma reads them."""
    last = ws.snapshot.get(dkey)
    fenced = None
    if drows is not None and all(r in ws.at_fence for r in drows):
        fenced = np.stack([ws.at_fence[r] for r in drows], axis=-1)
    changed = (accumulate and (last is None or not np.array_equal(last, regs))
               and (fenced is None or fenced.shape != regs.shape or not np.array_equal(fenced, regs)))
    if last is None and fenced is None:  # nothing to compare with: only the first-fence rule
        changed = False
    if not ws.ever_fenced or changed:
        why = ("this warp's first wgmma.mma_async has no wgmma.fence before it" if not ws.ever_fenced else
               "the accumulator registers were changed by other instructions since the last wgmma, with no "
               "wgmma.fence between")
        eng.report("wgmma-missing-fence", inst, lanes,
                   f"{why}: wgmma reads its registers asynchronously, so issue wgmma.fence.sync.aligned "
                   "(warpgroup_arrive()) before the first wgmma and after touching its registers", once=True)


def _a_map(t):
    """(row, col) of each element of a warp's register-A fragment (16 rows), per the mma.sync maps."""
    from .ops_mma import SHAPES
    key = {"bf16": ("m16n8k16", "f16"), "f16": ("m16n8k16", "f16"), "tf32": ("m16n8k8", "tf32"),
           "e4m3": ("m16n8k32", "i8"), "e5m2": ("m16n8k32", "i8")}[t]
    return SHAPES[key][0]


def _reg_a(regs, t, amap):
    r = np.stack(regs, axis=-1).astype(np.uint32)  # (32, nregs)
    if t in ("e4m3", "e5m2"):
        vals = VALUES[t][r.view(np.uint8).reshape(32, -1).astype(np.int64)]
    else:
        vals = wm.unpack([r[:, k] for k in range(r.shape[1])], t)
    rows, cols = amap
    A = np.zeros((16, int(cols.max()) + 1))
    A[rows, cols] = vals
    return A


def _d_index(N):
    """(row, col) of accumulator element e (0..N/2-1) of each lane, in the warp's 16 x N tile."""
    e = np.arange(N // 2)[None, :]
    lane = np.arange(32)[:, None]
    g, t4 = lane // 4, lane % 4
    j, k = e // 4, e % 4
    return g + 8 * (k // 2), 8 * j + 2 * t4 + k % 2


def _unpack_d(regs, td):
    """(32, nregs) raw -> (16, N) float64."""
    if td == "f32":
        vals = regs.astype(np.uint32).view(np.float32).astype(np.float64)
    else:
        vals = regs.astype(np.uint32).view(np.float16).reshape(32, -1).astype(np.float64)
    N = vals.shape[1] * 2
    rows, cols = _d_index(N)
    out = np.zeros((16, N))
    out[rows, cols] = vals
    return out


def _pack_d(mat, td):
    N = mat.shape[1]
    rows, cols = _d_index(N)
    vals = mat[rows, cols]
    if td == "f32":
        return vals.astype(np.float32).view(np.uint32)
    return np.ascontiguousarray(vals.astype(np.float16)).view(np.uint32)


__all__ = ["wgmma"]
