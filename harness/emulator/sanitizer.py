"""Shared-memory hazards and uninitialised reads, found from the engine's observer hooks.

It is longer than ~300 lines: the hazard rules (what orders two accesses) are one piece; the
shadow records, lane kernel and wording already live in shared_shadow.py and sanitizer_report.py.

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
rules; the tests run both. The shadow records and the lane kernel are in shared_shadow.py, the
wording of findings in sanitizer_report.py; global memory's initcheck in initcheck.py.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .findings import Finding
from .global_shadow import GlobalRaces
from .observer import Observer
from .sanitizer_report import _KINDS, _TEXT, Reports
from .shared_shadow import _MAX_SHARED, _WORD, _lane_loop, _Record, _same_value_stores


class Sanitizer(Reports, Observer):
    """Reports race-raw, race-war, race-waw and uninitialized-read on shared memory."""

    def __init__(self, jit: bool = True, init=None, mem=None, code=None) -> None:
        self.jit = jit  # use the numba kernel when numba is installed (tests compare both paths)
        self.init = init  # initcheck.GlobalInit of the emulator: global bytes never written, or None
        self._found: dict[tuple[str, str | None, int | None], list] = {}
        # global-memory races within a launch (global_shadow.py); needs the memory for same-value stores
        self.races = GlobalRaces(mem, self._global_race, code) if mem is not None else None
        self._kernel = ""
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
        self._kernel = str(kernel)
        if getattr(self, "races", None) is not None:
            self.races.start(self._grid[0] * self._grid[1] * self._grid[2], tpb)
        # linear block id -> shadow row; grown on demand, since a huge grid is run a few
        # resident blocks at a time and must not cost memory per block up front
        self._slot_of = np.full(min(self._grid[0] * self._grid[1] * self._grid[2], 4096), -1, np.int64)
        self._free: list[int] = []
        self._nslots = 0
        self._cap = (0, 0)
        self._g = _WORD  # bytes per shadow entry: 4, refined to 2 or 1 by the first narrower access
        self._reserved = (0, 0)  # offsets of the reserved shared area, when the kernel has one
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

    def _refine(self, addrs: np.ndarray, size: int) -> None:
        """Shadow entries as narrow as the narrowest access (bf16, char arrays): two lanes writing
        the two halves of one word are not a race. The state of each entry is copied to its parts."""
        low = int(np.bitwise_or.reduce(addrs)) | int(size) | self._g
        g = low & -low
        if g >= self._g:
            return
        factor = self._g // g
        slots, words = self._cap
        for rec in (self._writer, self._r1, self._r2):
            for name in ("who", "when"):
                setattr(rec, name, np.repeat(getattr(rec, name).reshape(slots, words), factor, axis=1).ravel())
        self._cap, self._g = (slots, words * factor), g

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
        if self.races is not None:
            self.races.block_end(slots[slots >= 0])
        self._free.extend(int(s) for s in slots[slots >= 0])
        self._slot_of[blocks] = -1

    def on_kernel_end(self) -> None:
        return None

    # ---- ordering events -------------------------------------------------------------------
    def on_barrier(self, blocks) -> None:
        self._epoch[self._slots(blocks)] += 1

    def on_fence(self, inst, blocks, tids) -> None:
        if self.races is not None:
            self.races.fence(np.unique(np.asarray(blocks, np.int64)))

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

    # ---- accesses --------------------------------------------------------------------------
    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None) -> None:
        if len(tids) == 0:
            return
        if space == "global":
            # a load's unwritten bytes are reported before its races (the garbage came first); a
            # store's race record keeps whether its bytes held garbage, so it goes before the
            # initcheck marks them written
            if self.init is not None and op == "ld":
                self.init.access(self, inst, op, blocks, tids, addrs, size)
            if self.races is not None:
                s = self._slots(blocks)
                t = np.asarray(tids, np.int64)
                fresh = self.init.unwritten(addrs, size) if self.init is not None and op != "ld" else None
                self.races.access(inst, op, blocks, t, addrs, size, values, s, self._epoch[s], self._wsync(s, t),
                                  fresh)
            if self.init is not None and op != "ld":
                self.init.access(self, inst, op, blocks, tids, addrs, size)
            return
        if space != "shared":
            return
        s = self._slots(blocks)
        t = np.asarray(tids, np.int64)
        addrs = np.asarray(addrs, np.uint64)
        if self._reserved[1]:
            keep = (addrs < self._reserved[0]) | (addrs >= self._reserved[1])
            if not keep.all():
                s, t, addrs = s[keep], t[keep], addrs[keep]
                values = None if values is None else [v if np.ndim(v) == 0 else np.asarray(v)[keep] for v in values]
                if addrs.size == 0:
                    return
        if int(addrs.max()) >= _MAX_SHARED:  # wild offsets are the engine's out-of-bounds finding
            keep = addrs < _MAX_SHARED
            s, t, addrs = s[keep], t[keep], addrs[keep]
            values = None if values is None else [v if np.ndim(v) == 0 else v[keep] for v in values]
            if addrs.size == 0:
                return
        if op == "st" and values is not None and addrs.size > 1:
            s, t, addrs = _same_value_stores(s, t, addrs, values)
        if size < self._g:  # wider accesses are aligned to their size, or the engine reports them
            self._refine(addrs, size)
        nw = max(1, (int(size) + self._g - 1) // self._g)
        if self.jit and _lane_loop is not None:
            self._jit_access(inst, op, s, t, addrs, nw)
            return
        w = addrs.astype(np.int64) // self._g
        if nw > 1:  # a vector access covers several words; each is checked on its own
            w = (w[:, None] + np.arange(nw)).ravel()
            s, t = np.repeat(s, nw), np.repeat(t, nw)
        top = int(w.max()) + 1
        if top > self._cap[1]:
            self._grow(self._cap[0], max(top, 2 * self._cap[1]))
        fi = s * self._cap[1] + w
        line = -1 if inst.line is None else int(inst.line)
        epoch = self._epoch[s]
        ctx = (s, t, w, fi, epoch)
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
        self._writer.record(fi, t, epoch, self._wsync(s, t), line, atomic=op != "st")

    def _jit_access(self, inst, op, s, t, addrs, nw) -> None:
        line = -1 if inst.line is None else int(inst.line)
        code = {"ld": 0, "st": 1}.get(op, 2)
        top = int(addrs.max()) // self._g + nw
        if top > self._cap[1]:
            self._grow(self._cap[0], max(top, 2 * self._cap[1]))
        hits = np.zeros((4, 5), np.int64)
        wr, r1, r2 = self._writer, self._r1, self._r2
        _lane_loop(code, s, t, addrs, nw, self._cap[1], self._g, line, self._epoch, self._warp_epoch, self._lane_sync,
                   self._wpb, wr.who, wr.when, r1.who, r1.when, r2.who, r2.when, hits)
        if not hits[:, 0].any():  # the usual case: nothing to report
            return
        for k, kind in enumerate(_KINDS):
            count, i, other, other_line = (int(v) for v in hits[k][:4])
            if count:
                w = np.zeros(s.size, np.int64)
                w[i] = int(addrs[i]) // self._g
                self._report(kind, inst, count, (s, t, w), i, None if other < 0 else other,
                             None if other < 0 else other_line, _TEXT[kind])

    def _wsync(self, s, t) -> np.ndarray:
        return self._warp_epoch[s * self._wpb + t // 32]

    def _hazards(self, rec: _Record, ctx, who, skip_atomic=False):
        """Lanes whose access is unordered with `rec`'s earlier one: (lane indices, other tids).
        `who` is rec.who gathered at this access's words."""
        s, t, w, fi, epoch = ctx
        other1 = who & 0xFFFF  # other tid + 1
        live = (other1 != 0) & (other1 != t + 1) & ((who >> 32) == epoch)
        if skip_atomic:
            live &= (who & 0x10000) == 0
        if not live.any():
            return None
        i = np.flatnonzero(live)
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
            j = _cross_warp_first(ctx, i, other)
            self._report(kind, inst, i.size, ctx, int(i[j]), int(other[j]), self._line_of(rec, ctx, i[j]),
                         _TEXT[kind])

    def _check_readers(self, inst, ctx) -> None:
        for rec in (self._r1, self._r2):
            hit = self._hazards(rec, ctx, rec.who[ctx[3]])
            if hit is not None:
                i, other = hit
                j = _cross_warp_first(ctx, i, other)
                self._report("race-war", inst, i.size, ctx, int(i[j]), int(other[j]),
                             self._line_of(rec, ctx, i[j]), _TEXT["race-war"])
                return

    @staticmethod
    def _line_of(rec, ctx, i) -> int:
        return int(rec.when[ctx[3][i]] & 0xFFFFFFFF) - 1

    def _check_written(self, inst, ctx, writer) -> None:
        bad = (writer & 0xFFFF) == 0
        if bad.any():
            self._report("uninitialized-read", inst, int(bad.sum()), ctx, int(np.argmax(bad)), None, None,
                         _TEXT["uninitialized-read"])

    def _check_same_instruction(self, inst, ctx) -> None:
        """Two lanes storing to one word in one instruction: which value lands is undefined."""
        s, t, w, fi, epoch = ctx
        if fi.size < 2 or (fi[1:] > fi[:-1]).all():  # the usual case: distinct, increasing words
            return
        order = np.argsort(fi, kind="stable")
        ks, ts = fi[order], t[order]
        dup = (ks[1:] == ks[:-1]) & (ts[1:] != ts[:-1])
        if dup.any():
            j = int(np.argmax(dup))
            i, o = int(order[j + 1]), int(order[j])
            self._report("race-waw", inst, int(dup.sum()), ctx, i, int(t[o]), inst.line,
                         "writes shared memory at byte offset {off} ({here}) in the same instruction "
                         "as thread {other}: which value lands is undefined")

    def _record_read(self, ctx, line) -> None:
        s, t, w, fi, epoch = ctx
        r1 = self._r1
        who = r1.who[fi]
        cur = (who & 0xFFFF) - 1
        stale = (cur < 0) | ((who >> 32) != epoch) | (cur == t)
        wsync = self._wsync(s, t)
        if stale.all():
            r1.record(fi, t, epoch, wsync, line)
        elif stale.any():
            r1.record(fi[stale], t[stale], epoch[stale], wsync[stale], line)
        # lanes not held by slot 1 (another reader got there, or a lane of the same instruction
        # read the same word) go to slot 2, so a later writer always finds a reader not itself
        if fi.size < 2 or (fi[1:] > fi[:-1]).all():  # distinct words: slot 1 holds every stale lane
            other = ~stale
        else:
            other = (r1.who[fi] & 0xFFFF) != t + 1
        if other.any():
            self._r2.record(fi[other], t[other], epoch[other], wsync[other], line)


def _cross_warp_first(ctx, i, other) -> int:
    """Which hazard to describe: the first whose other thread is in another warp (the missing
    barrier is then __syncthreads(), not __syncwarp()), else the first."""
    cross = np.flatnonzero(other // 32 != ctx[1][i] // 32)
    return int(cross[0]) if cross.size else 0
