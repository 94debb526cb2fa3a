"""Shared-memory hazards and uninitialised reads, found from the engine's observer hooks.

Lockstep execution hides races: the emulator runs a warp's lanes together, so a kernel missing a
__syncthreads() usually computes the right answer here and the wrong one on a GPU. The sanitizer
keeps shadow state per 4-byte shared word of every resident block instead:

- the last writer (thread, line, barrier epoch, warp-sync epoch, atomic or not), and
- up to two readers since then (a write races with any reader other than itself, so two distinct
  readers are enough to always name one that is not the writer).

Two accesses are ordered when a barrier of their block completed between them (the block's epoch
moved on), or, for lanes of one warp, when both lanes took part in a warp-level sync after the
first access (since Volta a warp's lanes are scheduled independently, so warp-synchronous code
without __syncwarp is a race). Atomics never race with atomics; a plain access racing an atomic
one is reported. The checks of one access run over all lanes of the issued group (which may span
warps and blocks) as one numba pass when numba is installed, else as numpy passes with the same
rules; the tests run both.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .findings import Finding
from .observer import Observer

_WORD = 4  # shadow granularity: one 4-byte shared word, the bank width
_MAX_SHARED = 256 * 1024  # more than any block's window (227 KB on an H200): the shadow's bound


def _coords(linear: int, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return (int(linear % x), int((linear // x) % y), int(linear // (x * y)))


# Kinds the per-lane kernel reports, in the order of its `hits` rows, and what each says.
_KINDS = ("uninitialized-read", "race-raw", "race-waw", "race-war")
_TEXT = {
    "uninitialized-read": "reads shared memory at byte offset {off} ({here}) that no thread of this block "
                          "has written: shared memory holds garbage when a block starts",
    "race-raw": "reads shared memory at byte offset {off} ({here}), which thread {other} wrote at {there} "
                "with no {sync} between",
    "race-waw": "writes shared memory at byte offset {off} ({here}), which thread {other} wrote at {there} "
                "with no {sync} between, so which value survives is undefined",
    "race-war": "writes shared memory at byte offset {off} ({here}), which thread {other} read at {there} "
                "with no {sync} between, so the reader may see either value",
}


def _lane_loop(op, s, t, addrs, nw, size, W, line, epoch, warp_epoch, lane_sync, wpb,
               w_who, w_when, r1_who, r1_when, r2_who, r2_when, hits):
    """Every check of one shared access, one lane (and word) at a time: the fast path when numba
    is installed (one pass instead of ~50 numpy passes over the lanes). The same rules as the
    numpy path below; lanes are taken in order, so two lanes of one store to one word meet as
    an ordinary write-after-write. hits[k] = (count, first lane, other tid, other line).
    The caller sizes the shadow for every offset first."""
    tpw = wpb * 32
    for i in range(s.shape[0]):
        sl, ti = s[i], t[i]
        ep = epoch[sl]
        ws = warp_epoch[sl * wpb + ti // 32]
        m = 15 if size >= 4 else ((1 << size) - 1) << np.int64(addrs[i] & 3)  # the bytes it touches
        for k in range(nw):
            f = sl * W + np.int64(addrs[i] // 4) + k
            who = w_who[f]
            o1 = who & 0xFFFF
            if op != 1 and o1 == 0:  # loads and atomics read the old value
                _hit(hits, 0, i, -1, -1)
            elif o1 != 0 and o1 != ti + 1 and (who >> 32) == ep and not (op == 2 and (who & 0x10000) != 0) \
                    and (~(w_when[f] >> 24)) & 15 & m:
                osync = w_when[f] >> 32
                if not (o1 - 1) // 32 == ti // 32 or not (lane_sync[sl * tpw + o1 - 1] > osync
                                                           and lane_sync[sl * tpw + ti] > osync):
                    _hit(hits, 2 if op == 1 else 1, i, o1 - 1, (w_when[f] & 0xFFFFFF) - 1)
            packed = (ep << 32) | (ti + 1)
            stamp = (ws << 32) | ((~m & 15) << 24) | ((line + 1) & 0xFFFFFF)
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
                if not ((~(when >> 24)) & 15 & m):  # it read other bytes of the word
                    continue
                osync = when >> 32
                if (c - 1) // 32 == ti // 32 and lane_sync[sl * tpw + c - 1] > osync \
                        and lane_sync[sl * tpw + ti] > osync:
                    continue
                _hit(hits, 3, i, c - 1, (when & 0xFFFFFF) - 1)
                break
            w_who[f] = packed | (0x10000 if op == 2 else 0)
            w_when[f] = stamp


def _hit(hits, kind, i, other, other_line):
    if hits[kind, 0] == 0:
        hits[kind, 1], hits[kind, 2], hits[kind, 3] = i, other, other_line
    hits[kind, 0] += 1


try:  # numba is optional: without it the numpy path below gives the same findings, slower
    import numba

    _hit = numba.njit(inline="always", cache=True)(_hit)  # inlined: a call would incref arrays
    _lane_loop = numba.njit(cache=True)(_lane_loop)
except ImportError:
    _lane_loop = None


class _Record:
    """Shadow state of one kind of access (the last writer, or one reader slot), flat over
    (block slot, word). Packed so the common question, "did another thread touch this word in
    this barrier interval?", costs one gather:

    who  = epoch << 32 | atomic << 16 | (tid + 1)     (0: nothing recorded)
    when = warp-sync epoch << 32 | bytes not touched << 24 | (line + 1)
                                                      (4 bits, one per byte of the word: 0 for a
                                                      whole-word access; sub-word accesses of
                                                      different bytes never conflict)
    """

    def __init__(self, size: int):
        self.who = np.zeros(size, np.int64)
        self.when = np.zeros(size, np.int64)

    def relayout(self, old_shape, new_shape) -> None:
        for name in ("who", "when"):
            new = np.zeros(new_shape, np.int64)
            new[: old_shape[0], : old_shape[1]] = getattr(self, name).reshape(old_shape)
            setattr(self, name, new.ravel())

    def record(self, fi, t, epoch, wsync, line, mask=15, atomic: bool = False) -> None:
        self.who[fi] = (epoch << 32) | (t + (1 + (atomic << 16)))
        self.when[fi] = (wsync << 32) | ((~np.asarray(mask, np.int64) & 15) << 24) | ((line + 1) & 0xFFFFFF)


class Sanitizer(Observer):
    """Reports race-raw, race-war, race-waw and uninitialized-read on shared memory."""

    def __init__(self, jit: bool = True) -> None:
        self.jit = jit  # use the numba kernel when numba is installed (tests compare both paths)
        self._found: dict[tuple[str, str | None, int | None], list] = {}
        self.on_kernel_start("", (1, 1, 1), (1, 1, 1), 0)

    # ---- results ---------------------------------------------------------------------------
    @property
    def findings(self) -> list[Finding]:
        """One Finding per (kind, file, line), describing the first occurrence, with a count."""
        return [replace(first, count=count) for first, count in self._found.values()]

    # ---- lifecycle -------------------------------------------------------------------------
    def on_kernel_start(self, kernel, grid, block, shared_bytes) -> None:
        self._grid = tuple(int(v) for v in (tuple(grid) + (1, 1, 1))[:3])
        self._block = tuple(int(v) for v in (tuple(block) + (1, 1, 1))[:3])
        tpb = self._block[0] * self._block[1] * self._block[2]
        self._wpb = (tpb + 31) // 32
        self._found = {}
        self._reserved = (0, 0)  # offsets of the reserved shared area, when the kernel has one
        # linear block id -> shadow row; grown on demand, since a huge grid is run a few
        # resident blocks at a time and must not cost memory per block up front
        self._slot_of = np.full(min(self._grid[0] * self._grid[1] * self._grid[2], 4096), -1, np.int64)
        self._free: list[int] = []
        self._nslots = 0
        self._cap = (0, 0)
        self._grow(8, max(64, (int(shared_bytes) + _WORD - 1) // _WORD))

    def _grow(self, slots: int, words: int) -> None:
        old = self._cap
        slots, words = max(slots, old[0]), max(words, old[1])
        if (slots, words) == old:
            return
        if old == (0, 0):
            self._writer, self._r1, self._r2 = (_Record(slots * words) for _ in range(3))
        else:
            for rec in (self._writer, self._r1, self._r2):
                rec.relayout(old, (slots, words))
        for name, width in (("_epoch", 1), ("_warp_epoch", self._wpb), ("_lane_sync", self._wpb * 32)):
            new = np.zeros(slots * width, np.int64)  # barriers per block; syncs per warp / lane
            if old[0]:
                new[: old[0] * width] = getattr(self, name)
            setattr(self, name, new)
        self._cap = (slots, words)

    def _cover(self, blocks: np.ndarray) -> None:
        top = int(blocks.max()) + 1 if blocks.size else 0
        if top > self._slot_of.size:
            grown = np.full(max(top, 2 * self._slot_of.size), -1, np.int64)
            grown[: self._slot_of.size] = self._slot_of
            self._slot_of = grown

    def on_block_start(self, blocks) -> None:
        blocks = np.asarray(blocks, np.int64)
        self._cover(blocks)
        fresh = blocks[self._slot_of[blocks] < 0]
        if fresh.size:
            self._assign(np.unique(fresh))

    def _assign(self, blocks: np.ndarray) -> None:
        reuse = min(len(self._free), len(blocks))
        slots = [self._free.pop() for _ in range(reuse)]
        extra = len(blocks) - reuse
        if extra:
            slots.extend(range(self._nslots, self._nslots + extra))
            self._nslots += extra
            if self._nslots > self._cap[0]:
                self._grow(max(self._nslots, 2 * self._cap[0]), self._cap[1])
        slots = np.asarray(slots, np.int64)
        self._slot_of[blocks] = slots
        # Shared memory is poisoned at block start: nothing written, nothing read, no epochs.
        W = self._cap[1]
        rows = (slots[:, None] * W + np.arange(W)).ravel()
        for rec in (self._writer, self._r1, self._r2):
            rec.who[rows] = 0
        self._epoch[slots] = 0
        self._warp_epoch[(slots[:, None] * self._wpb + np.arange(self._wpb)).ravel()] = 0
        lanes = self._wpb * 32
        self._lane_sync[(slots[:, None] * lanes + np.arange(lanes)).ravel()] = 0

    def _slots(self, blocks) -> np.ndarray:
        blocks = np.asarray(blocks, np.int64)
        self._cover(blocks)
        slots = self._slot_of[blocks]
        if (slots < 0).any():  # an engine that skipped on_block_start still gets checked
            self._assign(np.unique(blocks[slots < 0]))
            slots = self._slot_of[blocks]
        return slots

    def on_shared_init(self, blocks, offset, nbytes) -> None:
        """The system's reserved area (cooperative groups' scratch and its own barriers, built
        from acquire/release atomics this shadow does not model): correct by construction, and
        left unchecked."""
        self._reserved = (int(offset), int(offset) + int(nbytes))

    def on_block_end(self, blocks) -> None:
        blocks = np.unique(np.asarray(blocks, np.int64))
        self._cover(blocks)
        slots = self._slot_of[blocks]
        self._free.extend(int(s) for s in slots[slots >= 0])
        self._slot_of[blocks] = -1

    def on_kernel_end(self) -> None:
        return None

    # ---- ordering events -------------------------------------------------------------------
    def on_barrier(self, blocks) -> None:
        self._epoch[self._slots(blocks)] += 1

    def on_warp_sync(self, blocks, warps, masks) -> None:
        slots = self._slots(blocks)
        warps = np.asarray(warps, np.int64)
        masks = np.asarray(masks, np.int64) & 0xFFFFFFFF
        wi = slots * self._wpb + warps
        self._warp_epoch[wi] += 1
        now = self._warp_epoch[wi]
        bits = ((masks[:, None] >> np.arange(32)) & 1).astype(bool)
        lanes = (slots * self._wpb * 32 + warps * 32)[:, None] + np.arange(32)
        self._lane_sync[lanes[bits]] = np.broadcast_to(now[:, None], bits.shape)[bits]

    def on_issue(self, inst, blocks, tids) -> None:
        return None

    # ---- accesses --------------------------------------------------------------------------
    def on_memory(self, inst, space, op, blocks, tids, addrs, size) -> None:
        if space != "shared" or len(tids) == 0:
            return
        if self._reserved[1]:
            a = np.asarray(addrs, np.uint64)
            keep = (a < self._reserved[0]) | (a >= self._reserved[1])
            if not keep.all():
                blocks, tids, addrs = np.asarray(blocks)[keep], np.asarray(tids)[keep], a[keep]
                if addrs.size == 0:
                    return
        self._access(inst, op, blocks, tids, addrs, size)

    def _access(self, inst, op, blocks, tids, addrs, size) -> None:
        s = self._slots(blocks)
        t = np.asarray(tids, np.int64)
        nw = max(1, (int(size) + _WORD - 1) // _WORD)
        addrs = np.asarray(addrs, np.uint64)
        if int(addrs.max()) >= _MAX_SHARED:  # wild offsets are the engine's out-of-bounds finding
            keep = addrs < _MAX_SHARED
            s, t, addrs = s[keep], t[keep], addrs[keep]
            if addrs.size == 0:
                return
        if self.jit and _lane_loop is not None:
            self._jit_access(inst, op, s, t, addrs, nw, int(size))
            return
        w = addrs.astype(np.int64) // _WORD
        # the bytes of its word each lane touches: sub-word accesses to different bytes never meet
        m = np.full(w.size, 15, np.int64) if size >= _WORD else \
            np.int64((1 << int(size)) - 1) << (addrs.astype(np.int64) & 3)
        if nw > 1:  # a vector access covers several words; each is checked on its own
            w = (w[:, None] + np.arange(nw)).ravel()
            s, t, m = np.repeat(s, nw), np.repeat(t, nw), np.repeat(m, nw)
        top = int(w.max()) + 1
        if top > self._cap[1]:
            self._grow(self._cap[0], max(top, 2 * self._cap[1]))
        fi = s * self._cap[1] + w
        line = -1 if inst.line is None else int(inst.line)
        epoch = self._epoch[s]
        ctx = (s, t, w, fi, epoch, m)
        writer = self._writer.who[fi]
        if op == "ld":
            self._check_written(inst, ctx, writer)
            self._check(inst, "race-raw", self._writer, ctx, writer)
            self._record_read(ctx, line)
            return
        if op == "st":
            self._check(inst, "race-waw", self._writer, ctx, writer)
            self._check_readers(inst, ctx)
            self._check_same_instruction(inst, ctx)
        else:  # atom / red: reads the old value, never races with another atomic
            self._check_written(inst, ctx, writer)
            self._check(inst, "race-raw", self._writer, ctx, writer, skip_atomic=True)
            self._check_readers(inst, ctx)
        self._writer.record(fi, t, epoch, self._wsync(s, t), line, mask=m, atomic=op != "st")

    def _jit_access(self, inst, op, s, t, addrs, nw, size) -> None:
        line = -1 if inst.line is None else int(inst.line)
        code = {"ld": 0, "st": 1}.get(op, 2)
        top = int(addrs.max()) // _WORD + nw
        if top > self._cap[1]:
            self._grow(self._cap[0], max(top, 2 * self._cap[1]))
        hits = np.zeros((4, 4), np.int64)
        wr, r1, r2 = self._writer, self._r1, self._r2
        _lane_loop(code, s, t, addrs, nw, size, self._cap[1], line, self._epoch, self._warp_epoch, self._lane_sync,
                   self._wpb, wr.who, wr.when, r1.who, r1.when, r2.who, r2.when, hits)
        for k, kind in enumerate(_KINDS):
            count, i, other, other_line = (int(v) for v in hits[k])
            if count:
                w = np.zeros(s.size, np.int64)
                w[i] = int(addrs[i]) // _WORD
                self._report(kind, inst, count, (s, t, w), i, None if other < 0 else other,
                             None if other < 0 else other_line, _TEXT[kind])

    def _wsync(self, s, t) -> np.ndarray:
        return self._warp_epoch[s * self._wpb + t // 32]

    def _hazards(self, rec: _Record, ctx, who, skip_atomic=False):
        """Lanes whose access is unordered with `rec`'s earlier one: (lane indices, other tids).
        `who` is rec.who gathered at this access's words."""
        s, t, w, fi, epoch, m = ctx
        other1 = who & 0xFFFF  # other tid + 1
        live = (other1 != 0) & (other1 != t + 1) & ((who >> 32) == epoch)
        if skip_atomic:
            live &= (who & 0x10000) == 0
        if not live.any():
            return None
        i = np.flatnonzero(live)
        i = i[((~(rec.when[fi[i]] >> 24)) & 15 & m[i]) != 0]  # only accesses sharing a byte
        if not i.size:
            return None
        other = other1[i] - 1
        osync = rec.when[fi[i]] >> 32
        same_warp = (other // 32) == (t[i] // 32)
        if same_warp.any():  # lanes of one warp are ordered only by a __syncwarp both joined
            lanes = s[i] * (self._wpb * 32)
            synced = (self._lane_sync[lanes + other] > osync) & (self._lane_sync[lanes + t[i]] > osync)
            keep = ~(same_warp & synced)
            i, other = i[keep], other[keep]
        return (i, other) if i.size else None

    def _check(self, inst, kind, rec, ctx, who, skip_atomic=False) -> None:
        hit = self._hazards(rec, ctx, who, skip_atomic)
        if hit is not None:
            i, other = hit
            self._report(kind, inst, i.size, ctx, int(i[0]), int(other[0]), self._line_of(rec, ctx, i[0]),
                         _TEXT[kind])

    def _check_readers(self, inst, ctx) -> None:
        for rec in (self._r1, self._r2):
            hit = self._hazards(rec, ctx, rec.who[ctx[3]])
            if hit is not None:
                i, other = hit
                self._report("race-war", inst, i.size, ctx, int(i[0]), int(other[0]),
                             self._line_of(rec, ctx, i[0]), _TEXT["race-war"])
                return

    @staticmethod
    def _line_of(rec, ctx, i) -> int:
        return int(rec.when[ctx[3][i]] & 0xFFFFFF) - 1

    def _check_written(self, inst, ctx, writer) -> None:
        bad = (writer & 0xFFFF) == 0
        if bad.any():
            self._report("uninitialized-read", inst, int(bad.sum()), ctx, int(np.argmax(bad)), None, None,
                         _TEXT["uninitialized-read"])

    def _check_same_instruction(self, inst, ctx) -> None:
        """Two lanes storing to the same bytes in one instruction: which value lands is undefined."""
        s, t, w, fi, epoch, m = ctx
        if fi.size < 2 or (fi[1:] > fi[:-1]).all():  # the usual case: distinct, increasing words
            return
        low = np.log2(m & -m).astype(np.int64)  # first byte touched: same-byte stores sort together
        order = np.argsort(fi * 4 + low, kind="stable")
        ks, ts, ms = fi[order], t[order], m[order]
        dup = (ks[1:] == ks[:-1]) & (ts[1:] != ts[:-1]) & ((ms[1:] & ms[:-1]) != 0)
        if dup.any():
            j = int(np.argmax(dup))
            i, o = int(order[j + 1]), int(order[j])
            self._report("race-waw", inst, int(dup.sum()), ctx, i, int(t[o]), inst.line,
                         "writes shared memory at byte offset {off} ({here}) in the same instruction "
                         "as thread {other}: which value lands is undefined")

    def _record_read(self, ctx, line) -> None:
        s, t, w, fi, epoch, m = ctx
        r1 = self._r1
        who = r1.who[fi]
        cur = (who & 0xFFFF) - 1
        stale = (cur < 0) | ((who >> 32) != epoch) | (cur == t)
        wsync = self._wsync(s, t)
        if stale.all():
            r1.record(fi, t, epoch, wsync, line, mask=m)
        elif stale.any():
            r1.record(fi[stale], t[stale], epoch[stale], wsync[stale], line, mask=m[stale])
        # lanes not held by slot 1 (another reader got there, or a lane of the same instruction
        # read the same word) go to slot 2, so a later writer always finds a reader not itself
        if fi.size < 2 or (fi[1:] > fi[:-1]).all():  # distinct words: slot 1 holds every stale lane
            other = ~stale
        else:
            other = (r1.who[fi] & 0xFFFF) != t + 1
        if other.any():
            self._r2.record(fi[other], t[other], epoch[other], wsync[other], line, mask=m[other])

    # ---- reporting -------------------------------------------------------------------------
    def _report(self, kind, inst, count, ctx, i, other, other_line, template) -> None:
        key = (kind, inst.file, inst.line)
        if key in self._found:
            self._found[key][1] += count
            return
        s, t, w = ctx[0], ctx[1], ctx[2]
        owners = np.flatnonzero(self._slot_of == s[i])
        block = _coords(int(owners[0]) if owners.size else 0, self._grid)
        thread = _coords(int(t[i]), self._block)
        here = f"{inst.file or '?'}:{inst.line if inst.line is not None else '?'}"
        other_xyz = _coords(other, self._block) if other is not None else None
        ol = other_line if other_line is not None and other_line >= 0 else None
        there = f"{inst.file or '?'}:{ol if ol is not None else '?'}"
        same_warp = other is not None and other // 32 == int(t[i]) // 32
        sync = ("__syncwarp() (a warp's lanes do not run in lockstep since Volta)" if same_warp
                else "__syncthreads()")
        off = int(w[i]) * _WORD
        text = template.format(off=off, here=here, there=there, sync=sync,
                               other=_fmt(other_xyz) if other_xyz else "")
        message = f"thread {_fmt(thread)} of block {_fmt(block)} {text}"
        finding = Finding(kind=kind, message=message, file=inst.file, line=inst.line, block=block,
                          thread=thread, address=off, space="shared", other_thread=other_xyz, other_line=ol)
        self._found[key] = [finding, count]


def _fmt(xyz: tuple[int, int, int]) -> str:
    return f"({xyz[0]},{xyz[1]},{xyz[2]})"
