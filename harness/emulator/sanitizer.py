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
one is reported. Everything is numpy over the lanes of one issued group, which may span warps and
blocks.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from .findings import Finding
from .observer import Observer

_WORD = 4  # shadow granularity: one 4-byte shared word, the bank width


def _coords(linear: int, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return (int(linear % x), int((linear // x) % y), int(linear // (x * y)))


class _Access:
    """Shadow fields for one kind of access record (the writer, or one reader slot)."""

    def __init__(self, slots: int, words: int):
        self.tid = np.full((slots, words), -1, np.int32)  # -1: none recorded
        self.line = np.full((slots, words), -1, np.int32)
        self.epoch = np.zeros((slots, words), np.int32)  # block barrier epoch at the access
        self.wsync = np.zeros((slots, words), np.int32)  # the warp's sync epoch at the access

    def grow(self, slots: int, words: int) -> None:
        for name in ("tid", "line", "epoch", "wsync"):
            old = getattr(self, name)
            new = np.full((slots, words), -1 if name in ("tid", "line") else 0, np.int32)
            new[: old.shape[0], : old.shape[1]] = old
            setattr(self, name, new)

    def clear(self, slots: np.ndarray) -> None:
        self.tid[slots] = -1

    def record(self, s, w, tids, epoch, wsync, line) -> None:
        self.tid[s, w] = tids
        self.epoch[s, w] = epoch
        self.wsync[s, w] = wsync
        self.line[s, w] = line


class Sanitizer(Observer):
    """Reports race-raw, race-war, race-waw and uninitialized-read on shared memory."""

    def __init__(self) -> None:
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
        self._tpb = self._block[0] * self._block[1] * self._block[2]
        self._wpb = (self._tpb + 31) // 32
        self._found = {}
        nblocks = self._grid[0] * self._grid[1] * self._grid[2]
        self._slot_of = np.full(nblocks, -1, np.int32)  # linear block id -> shadow row
        self._free: list[int] = []
        self._nslots = 0
        words = max(64, (int(shared_bytes) + _WORD - 1) // _WORD)
        self._alloc(8, words)

    def _alloc(self, slots: int, words: int) -> None:
        self._writer = _Access(slots, words)
        self._atomic = np.zeros((slots, words), bool)  # the last write was an atomic
        self._r1 = _Access(slots, words)
        self._r2 = _Access(slots, words)
        self._epoch = np.zeros(slots, np.int32)  # barriers completed per block
        self._warp_epoch = np.zeros((slots, self._wpb), np.int32)  # warp syncs completed per warp
        self._lane_sync = np.zeros((slots, self._wpb * 32), np.int32)  # last sync each lane joined
        self._cap = (slots, words)

    def _grow(self, slots: int, words: int) -> None:
        slots, words = max(slots, self._cap[0]), max(words, self._cap[1])
        if (slots, words) == self._cap:
            return
        for acc in (self._writer, self._r1, self._r2):
            acc.grow(slots, words)
        atomic = np.zeros((slots, words), bool)
        atomic[: self._cap[0], : self._cap[1]] = self._atomic
        self._atomic = atomic
        for name in ("_epoch", "_warp_epoch", "_lane_sync"):
            old = getattr(self, name)
            new = np.zeros((slots,) + old.shape[1:], np.int32)
            new[: old.shape[0]] = old
            setattr(self, name, new)
        self._cap = (slots, words)

    def on_block_start(self, blocks) -> None:
        blocks = np.asarray(blocks, np.int64)
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
        for acc in (self._writer, self._r1, self._r2):
            acc.clear(slots)
        self._epoch[slots] = 0
        self._warp_epoch[slots] = 0
        self._lane_sync[slots] = 0

    def _slots(self, blocks) -> np.ndarray:
        blocks = np.asarray(blocks, np.int64)
        slots = self._slot_of[blocks]
        if (slots < 0).any():  # an engine that skipped on_block_start still gets checked
            self._assign(np.unique(blocks[slots < 0]))
            slots = self._slot_of[blocks]
        return slots.astype(np.int64)

    def on_block_end(self, blocks) -> None:
        blocks = np.unique(np.asarray(blocks, np.int64))
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
        self._warp_epoch[slots, warps] += 1
        now = self._warp_epoch[slots, warps]
        bits = ((masks[:, None] >> np.arange(32)) & 1).astype(bool)
        lanes = warps[:, None] * 32 + np.arange(32)
        rows = np.broadcast_to(slots[:, None], bits.shape)
        self._lane_sync[rows[bits], lanes[bits]] = np.broadcast_to(now[:, None], bits.shape)[bits]

    def on_issue(self, inst, blocks, tids) -> None:
        return None

    # ---- accesses --------------------------------------------------------------------------
    def on_memory(self, inst, space, op, blocks, tids, addrs, size) -> None:
        if space != "shared" or len(tids) == 0:
            return
        s = self._slots(blocks)
        t = np.asarray(tids, np.int64)
        w = np.asarray(addrs, np.int64) // _WORD
        nw = max(1, (int(size) + _WORD - 1) // _WORD)
        if nw > 1:  # a vector access covers several words; each is checked on its own
            w = (w[:, None] + np.arange(nw)).ravel()
            s, t = np.repeat(s, nw), np.repeat(t, nw)
        if w.min() < 0:
            keep = w >= 0  # negative offsets are the engine's out-of-bounds finding, not ours
            s, t, w = s[keep], t[keep], w[keep]
        if w.size == 0:
            return
        self._grow(self._cap[0], int(w.max()) + 1)
        line = -1 if inst.line is None else int(inst.line)
        epoch = self._epoch[s]
        wsync = self._warp_epoch[s, t // 32]
        if op == "ld":
            self._check_written(inst, s, t, w)
            self._check_writer(inst, "race-raw", s, t, w, epoch, skip_atomic=False)
            self._record_read(s, t, w, epoch, wsync, line)
            return
        if op == "st":
            self._check_writer(inst, "race-waw", s, t, w, epoch, skip_atomic=False)
            self._check_readers(inst, s, t, w, epoch)
            self._check_same_instruction(inst, s, t, w)
            self._atomic[s, w] = False
        else:  # atom / red: reads the old value, never races with another atomic
            self._check_written(inst, s, t, w)
            self._check_writer(inst, "race-raw", s, t, w, epoch, skip_atomic=True)
            self._check_readers(inst, s, t, w, epoch)
            self._atomic[s, w] = True
        self._writer.record(s, w, t, epoch, wsync, line)
        self._r1.tid[s, w] = -1
        self._r2.tid[s, w] = -1

    def _unordered(self, s, t, other, other_epoch, other_wsync, epoch) -> np.ndarray:
        """True where `other`'s earlier access and this lane's access are not ordered."""
        live = (other >= 0) & (other != t) & (other_epoch == epoch)
        if not live.any():
            return live
        same_warp = (other // 32) == (t // 32)
        ls = self._lane_sync
        synced = (ls[s, np.maximum(other, 0)] > other_wsync) & (ls[s, t] > other_wsync)
        return live & ~(same_warp & synced)

    def _check_written(self, inst, s, t, w) -> None:
        bad = self._writer.tid[s, w] < 0
        if bad.any():
            i = int(np.argmax(bad))
            self._report("uninitialized-read", inst, int(bad.sum()), s, t, w, i, None, None,
                         "reads shared memory at byte offset {off} ({here}) that no thread of this "
                         "block has written: shared memory holds garbage when a block starts")

    def _check_writer(self, inst, kind, s, t, w, epoch, skip_atomic) -> None:
        wr = self._writer
        other = wr.tid[s, w]
        bad = self._unordered(s, t, other, wr.epoch[s, w], wr.wsync[s, w], epoch)
        if skip_atomic and bad.any():
            bad &= ~self._atomic[s, w]
        if bad.any():
            i = int(np.argmax(bad))
            verb = "reads" if kind == "race-raw" else "writes"
            self._report(kind, inst, int(bad.sum()), s, t, w, i, int(other[i]), int(wr.line[s[i], w[i]]),
                         verb + " shared memory at byte offset {off} ({here}), which thread {other} "
                         "wrote at {there} with no {sync} between")

    def _check_readers(self, inst, s, t, w, epoch) -> None:
        for rd in (self._r1, self._r2):
            other = rd.tid[s, w]
            bad = self._unordered(s, t, other, rd.epoch[s, w], rd.wsync[s, w], epoch)
            if bad.any():
                i = int(np.argmax(bad))
                self._report("race-war", inst, int(bad.sum()), s, t, w, i, int(other[i]),
                             int(rd.line[s[i], w[i]]),
                             "writes shared memory at byte offset {off} ({here}), which thread {other} "
                             "read at {there} with no {sync} between, so the reader may see either value")
                return

    def _check_same_instruction(self, inst, s, t, w) -> None:
        """Two lanes storing to one word in one instruction: which value lands is undefined."""
        key = s * self._cap[1] + w
        order = np.argsort(key, kind="stable")
        ks, ts = key[order], t[order]
        dup = (ks[1:] == ks[:-1]) & (ts[1:] != ts[:-1])
        if dup.any():
            j = int(np.argmax(dup))
            i, o = int(order[j + 1]), int(order[j])
            self._report("race-waw", inst, int(dup.sum()), s, t, w, i, int(t[o]), inst.line,
                         "writes shared memory at byte offset {off} ({here}) in the same instruction "
                         "as thread {other}: which value lands is undefined")

    def _record_read(self, s, t, w, epoch, wsync, line) -> None:
        r1 = self._r1
        cur = r1.tid[s, w]
        stale = (cur < 0) | (r1.epoch[s, w] != epoch) | (cur == t)
        if stale.any():
            r1.record(s[stale], w[stale], t[stale], epoch[stale], wsync[stale], line)
        other = r1.tid[s, w] != t
        if other.any():
            self._r2.record(s[other], w[other], t[other], epoch[other], wsync[other], line)

    # ---- reporting -------------------------------------------------------------------------
    def _report(self, kind, inst, count, s, t, w, i, other, other_line, template) -> None:
        key = (kind, inst.file, inst.line)
        if key in self._found:
            self._found[key][1] += count
            return
        block_lin = int(np.flatnonzero(self._slot_of == s[i])[0]) if (self._slot_of == s[i]).any() else 0
        block = _coords(block_lin, self._grid)
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
