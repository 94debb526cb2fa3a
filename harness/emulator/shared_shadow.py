"""The sanitizer's shadow of shared memory (sanitizer.py): the per-entry records, the per-lane
check kernel (numba when installed), and the same-value filter for stores.

An entry covers 4 bytes of a block's shared window until a narrower access refines it (the
Sanitizer keeps the width, g). Kinds the lane kernel reports are in its `hits` rows, in the order
of sanitizer_report._KINDS.
"""
from __future__ import annotations

import numpy as np

_WORD = 4  # shadow granularity: one 4-byte shared word, the bank width
_MAX_SHARED = 256 * 1024  # more than any block's window (227 KB on an H200): the shadow's bound


def _lane_loop(op, s, t, addrs, nw, W, g, line, epoch, warp_epoch, lane_sync, wpb,
               w_who, w_when, r1_who, r1_when, r2_who, r2_when, hits):
    """Every check of one shared access, one lane (and word) at a time: the fast path when numba
    is installed (one pass instead of ~50 numpy passes over the lanes). The same rules as the
    numpy path below; lanes are taken in order, so two lanes of one store to one word meet as
    an ordinary write-after-write. hits[k] = (count, lane, other tid, other line, other warp):
    the first hazard, or the first whose other thread is in another warp.
    The caller sizes the shadow for every offset first."""
    tpw = wpb * 32
    for i in range(s.shape[0]):
        sl, ti = s[i], t[i]
        ep = epoch[sl]
        ws = warp_epoch[sl * wpb + ti // 32]
        for k in range(nw):
            f = sl * W + np.int64(addrs[i] // g) + k
            who = w_who[f]
            o1 = who & 0xFFFF
            if op != 1 and o1 == 0:  # loads and atomics read the old value
                _hit(hits, 0, i, -1, -1, False)
            elif o1 != 0 and o1 != ti + 1 and (who >> 32) == ep and not (op == 2 and (who & 0x10000) != 0):
                osync = w_when[f] >> 32
                if not (o1 - 1) // 32 == ti // 32 or not (lane_sync[sl * tpw + o1 - 1] > osync
                                                           and lane_sync[sl * tpw + ti] > osync):
                    _hit(hits, 2 if op == 1 else 1, i, o1 - 1, (w_when[f] & 0xFFFFFFFF) - 1,
                         (o1 - 1) // 32 != ti // 32)
            packed = (ep << 32) | (ti + 1)
            stamp = (ws << 32) | (line + 1)
            if op == 0:  # a load: remember up to two readers of this interval
                r = r1_who[f]
                c = r & 0xFFFF
                if c == 0 or (r >> 32) != ep or c == ti + 1:
                    r1_who[f] = packed
                    r1_when[f] = stamp
                else:
                    r2_who[f] = packed
                    r2_when[f] = stamp
                continue
            for slot in range(2):  # the two reader slots, inline: a jitted call per lane costs more
                r = r1_who[f] if slot == 0 else r2_who[f]
                c = r & 0xFFFF
                if c == 0 or c == ti + 1 or (r >> 32) != ep:
                    continue
                when = r1_when[f] if slot == 0 else r2_when[f]
                osync = when >> 32
                if (c - 1) // 32 == ti // 32 and lane_sync[sl * tpw + c - 1] > osync \
                        and lane_sync[sl * tpw + ti] > osync:
                    continue
                _hit(hits, 3, i, c - 1, (when & 0xFFFFFFFF) - 1, (c - 1) // 32 != ti // 32)
                break
            w_who[f] = packed | (0x10000 if op == 2 else 0)
            w_when[f] = stamp


def _hit(hits, kind, i, other, other_line, cross):
    """Count a hazard; describe the first, or the first with a thread of another warp (its fix is
    __syncthreads(), which a same-warp pair found first would hide behind __syncwarp())."""
    if hits[kind, 0] == 0 or (cross and hits[kind, 4] == 0):
        hits[kind, 1], hits[kind, 2], hits[kind, 3], hits[kind, 4] = i, other, other_line, 1 if cross else 0
    hits[kind, 0] += 1


def _increasing(s, addrs):
    """True when the addresses strictly increase inside each run of one block slot. A group's
    lanes of one block are contiguous (lane order), so then no two lanes share a place."""
    for i in range(1, s.shape[0]):
        if s[i] == s[i - 1] and addrs[i] <= addrs[i - 1]:
            return False
    return True


try:  # numba is optional: without it the numpy path below gives the same findings, slower
    import numba

    _hit = numba.njit(inline="always", cache=True)(_hit)  # inlined: a call would incref arrays
    _lane_loop = numba.njit(cache=True)(_lane_loop)
    _increasing = numba.njit(cache=True)(_increasing)
except ImportError:
    _lane_loop = _increasing = None


class _Record:
    """Shadow state of one kind of access (the last writer, or one reader slot), flat over
    (block slot, word). Packed so the common question, "did another thread touch this word in
    this barrier interval?", costs one gather:

    who  = epoch << 32 | atomic << 16 | (tid + 1)     (0: nothing recorded)
    when = warp-sync epoch << 32 | (line + 1)         (read only when a hazard is suspected)
    """

    def __init__(self, size: int):
        self.who = np.zeros(size, np.int64)
        self.when = np.zeros(size, np.int64)

    def relayout(self, old_shape, new_shape) -> None:
        for name in ("who", "when"):
            new = np.zeros(new_shape, np.int64)
            new[: old_shape[0], : old_shape[1]] = getattr(self, name).reshape(old_shape)
            setattr(self, name, new.ravel())

    def record(self, fi, t, epoch, wsync, line, atomic: bool = False) -> None:
        self.who[fi] = (epoch << 32) | (t + (1 + (atomic << 16)))
        self.when[fi] = (wsync << 32) | (line + 1)


def _same_value_stores(s, t, addrs, values):
    """Drop the lanes of one store that write the same bytes to the same place as an earlier lane
    of it: all lanes of a warp storing one value to one word (a broadcast, Triton's reductions)
    is no race. Lanes storing different values to one place stay, and are reported."""
    if _increasing is not None:  # distinct places, the usual case, in one pass
        if _increasing(s, addrs):
            return s, t, addrs
    elif ((addrs[1:] > addrs[:-1]) | (s[1:] != s[:-1])).all():
        return s, t, addrs
    key = s * _MAX_SHARED + addrs.astype(np.int64)
    n = key.size
    order = np.argsort(key, kind="stable")
    ks = key[order]
    head = np.ones(n, bool)
    head[1:] = ks[1:] != ks[:-1]
    first = order[np.maximum.accumulate(np.where(head, np.arange(n), 0))]  # each lane's run head
    same = np.ones(n, bool)
    for v in values:  # bitwise: a NaN stored by every lane is still one value
        v = np.ascontiguousarray(np.broadcast_to(np.asarray(v), (n,)))
        v = v.view(_uint_of(v.dtype))
        same &= v[order] == v[first]
    drop = np.zeros(n, bool)
    drop[order] = same & ~head
    keep = ~drop
    return s[keep], t[keep], addrs[keep]


def _uint_of(dtype):
    return np.dtype(f"u{np.dtype(dtype).itemsize}")
