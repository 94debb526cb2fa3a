"""The sanitizer's Hopper checks: TMA and bulk copies against their mbarrier phases, wgmma operands
in flight, and mbarrier misuse. The ops (ops_mbarrier, ops_tma, ops_wgmma, ops_cluster) tell it
what they do through the methods below; it watches shared-memory accesses through on_memory.

- bulk-copy-unwaited: a thread reads shared bytes a copy delivers in phase p of an mbarrier while
  it has not seen phase p complete (no wait, a wait with the wrong parity, or a wait that returned
  false and was not retried). On a GPU the bytes may not have arrived; here they have not either.
- bulk-copy-overwrite: the same, where the thread had seen the buffer's previous copy: the producer
  refilled a stage its consumers still read (it did not wait on an 'empty' barrier first).
- mbarrier-over-arrive: an arrival on a phase whose expected arrivals were all in while its
  transaction bytes were still owed: the barrier was armed again before its phase flipped.
- mbarrier-tx-mismatch: the copies brought more bytes than expect_tx announced.
- wgmma-operand-changed: shared memory a committed wgmma reads was stored to before the warp's
  wgmma.wait_group covered it (the wgmma may still be reading it).
"""
from __future__ import annotations

import numpy as np

from .findings import Finding
from .observer import Fanout, Observer


def check_of(eng):
    obs = eng.observer
    for o in (obs.observers if isinstance(obs, Fanout) else [obs]):
        if isinstance(o, HopperCheck):
            return o
    return None


class _Copy:
    __slots__ = ("file", "hi", "key", "line", "lo", "phase", "refill", "tid")

    def __init__(self, lo, hi, key, phase, line, file, tid, refill):
        self.lo, self.hi, self.key, self.phase = lo, hi, key, phase
        self.line, self.file, self.tid, self.refill = line, file, tid, refill


class HopperCheck(Observer):
    def __init__(self) -> None:
        self._found: dict[tuple, list] = {}
        self.on_kernel_start("", (1, 1, 1), (1, 1, 1), 0)

    @property
    def findings(self) -> list[Finding]:
        return [Finding(**{**f.__dict__, "count": n}) for f, n in self._found.values()]

    def on_kernel_start(self, kernel, grid, block, shared_bytes) -> None:
        self._grid = tuple(int(v) for v in (tuple(grid) + (1, 1, 1))[:3])
        self._block = tuple(int(v) for v in (tuple(block) + (1, 1, 1))[:3])
        self._T = self._block[0] * self._block[1] * self._block[2]
        self._found = {}
        self._copies: dict[int, list[_Copy]] = {}  # block -> copies into its shared memory
        self._seen: dict[tuple, np.ndarray] = {}  # (block, barrier key) -> completed phases each thread saw
        self._wgmma: dict[int, list] = {}  # block -> [(warp, group, lo, hi, line)] reads in flight
        self._groups: dict[tuple[int, int], int] = {}  # (block, warp) -> committed wgmma groups

    # ---- what the ops tell ----------------------------------------------------------------------
    def barrier_init(self, blocks, offs) -> None:
        for b, f in zip(np.asarray(blocks).tolist(), np.asarray(offs).tolist()):
            self._seen.pop((b, (b, f)), None)

    def copy_issued(self, inst, block, lo, hi, key, phase, tid) -> None:
        lst = self._copies.setdefault(block, [])
        refill = any(c.lo < hi and lo < c.hi for c in lst)
        lst[:] = [c for c in lst if not (c.lo >= lo and c.hi <= hi)]
        lst.append(_Copy(lo, hi, key, phase, inst.line, inst.file, tid, refill))

    def observed(self, key, bar, tids, tokens) -> None:
        """Threads saw a wait on barrier `key` succeed: with tokens, the phases they named; with
        parity, the latest completed phase of that parity (bar.phase is the completed count)."""
        seen = self._seen.setdefault((key[0], key), np.zeros(self._T, np.int64))
        if tokens is not None:
            got = np.asarray(tokens, np.int64) + 1
        else:
            got = np.full(len(tids), bar.phase, np.int64)
        np.maximum.at(seen, np.asarray(tids, np.int64), got)

    def observed_parity(self, key, bar, tids, parity) -> None:
        c = bar.phase
        seen = self._seen.setdefault((key[0], key), np.zeros(self._T, np.int64))
        got = np.where(((c - 1) & 1) == (np.asarray(parity) & 1), c, c - 1)
        np.maximum.at(seen, np.asarray(tids, np.int64), np.broadcast_to(got, (len(tids),)).astype(np.int64))

    def over_arrive(self, eng, inst, key, bar, lanes) -> None:
        eng.report("mbarrier-over-arrive", inst, lanes,
                   f"an arrival on the mbarrier at shared byte offset {key[1]} whose {bar.expected} expected "
                   f"arrival(s) of phase {bar.phase} are already in (its {max(bar.tx, 0)} transaction bytes are "
                   "still owed): the barrier is armed again before its phase flipped. Wait for the phase to "
                   "complete (try_wait.parity) before arriving on it again, or init it with the number of "
                   "threads that arrive", address=key[1], space="shared", once=True)

    def tx_underflow(self, eng, inst, key, bar, lanes) -> None:
        eng.report("mbarrier-tx-mismatch", inst, lanes if lanes is not None else np.array([0]),
                   f"the copies signalling the mbarrier at shared byte offset {key[1]} brought {-bar.tx} bytes "
                   f"more than expect_tx announced (line {bar.tx_line}): its phase can complete before the "
                   "last copy lands. expect_tx exactly the bytes of every copy of the phase",
                   address=key[1], space="shared", once=True)

    def wgmma_issued(self, block, warp, group, ranges, line) -> None:
        lst = self._wgmma.setdefault(block, [])
        for lo, hi in ranges:
            lst.append((warp, group, lo, hi, line))

    def wgmma_waited(self, block, warp, done_below) -> None:
        lst = self._wgmma.get(block)
        if lst:
            lst[:] = [w for w in lst if not (w[0] == warp and w[1] < done_below)]

    # ---- what the engine shows ------------------------------------------------------------------
    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None) -> None:
        if space != "shared" or (not self._copies and not self._wgmma):
            return
        blocks = np.asarray(blocks, np.int64)
        a = np.asarray(addrs, np.int64)
        tids = np.asarray(tids, np.int64)
        for b in np.unique(blocks).tolist():
            m = blocks == b
            if op == "ld" and b in self._copies:
                self._reads(inst, b, tids[m], a[m], size)
            if op != "ld" and b in self._wgmma:
                self._writes(inst, b, tids[m], a[m], size)

    def _reads(self, inst, b, tids, a, size) -> None:
        for c in self._copies[b]:
            hit = (a < c.hi) & (a + size > c.lo)
            if not hit.any():
                continue
            seen = self._seen.get((b, c.key))
            saw = seen[tids[hit]] if seen is not None else np.zeros(int(hit.sum()), np.int64)
            bad = saw < c.phase + 1
            if not bad.any():
                continue
            i = int(np.argmax(bad))
            tid, addr = int(tids[hit][i]), int(a[hit][i])
            here = f"{inst.file or '?'}:{inst.line if inst.line is not None else '?'}"
            there = f"{c.file or '?'}:{c.line if c.line is not None else '?'}"
            if c.refill and saw[i] >= c.phase:
                kind = "bulk-copy-overwrite"
                msg = (f"thread {_fmt(_coords(tid, self._block))} reads shared byte offset {addr} ({here}), which the "
                       f"copy at {there} is refilling for phase {c.phase} of its mbarrier while this thread still "
                       "reads the previous data: the producer reused the buffer before its consumers released it. "
                       "Give each stage an 'empty' mbarrier the consumers arrive on after reading, and have the "
                       "producer wait on it before the next copy")
            else:
                kind = "bulk-copy-unwaited"
                msg = (f"thread {_fmt(_coords(tid, self._block))} reads shared byte offset {addr} ({here}) that the "
                       f"copy at {there} delivers in phase {c.phase} of the mbarrier at shared offset {c.key[1]}, "
                       "before it has seen that phase complete: wait on the mbarrier first "
                       f"(mbarrier.try_wait.parity with parity {c.phase & 1}, in a loop until it returns true), with "
                       "an expect_tx of exactly the bytes the copies bring")
            self._report(kind, inst, b, tid, addr, msg, c.line, c.tid)
            return

    def _writes(self, inst, b, tids, a, size) -> None:
        for warp, group, lo, hi, line in self._wgmma[b]:
            hit = (a < hi) & (a + size > lo)
            if hit.any():
                tid, addr = int(tids[hit][0]), int(a[hit][0])
                msg = (f"thread {_fmt(_coords(tid, self._block))} stores to shared byte offset {addr} "
                       f"({inst.file or '?'}:{inst.line}) which the wgmma.mma_async at line {line} (warp {warp}) may "
                       "still be reading: wgmma reads its shared operands asynchronously until "
                       "wgmma.wait_group covers its group. Wait (wgmma.wait_group N) before overwriting a stage")
                self._report("wgmma-operand-changed", inst, b, tid, addr, msg, line, warp * 32)
                return

    def _report(self, kind, inst, b, tid, addr, msg, other_line, other_tid) -> None:
        key = (kind, inst.file, inst.line)
        if key in self._found:
            self._found[key][1] += 1
            return
        f = Finding(kind=kind, message=msg, file=inst.file, line=inst.line, block=_coords(b, self._grid),
                    thread=_coords(tid, self._block), address=addr, space="shared",
                    other_thread=_coords(other_tid, self._block), other_line=other_line)
        self._found[key] = [f, 1]

    def on_block_end(self, blocks) -> None:
        for b in np.unique(np.asarray(blocks, np.int64)).tolist():
            self._copies.pop(b, None)
            self._wgmma.pop(b, None)
            for k in [k for k in self._seen if k[0] == b]:
                del self._seen[k]


def _coords(linear: int, dims) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return (int(linear % x), int((linear // x) % y), int(linear // (x * y)))


def _fmt(xyz) -> str:
    return f"({xyz[0]},{xyz[1]},{xyz[2]})"
