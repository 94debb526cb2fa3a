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
- wgmma reads through descriptors count as reads of their threads: an unwaited copy under them is
  bulk-copy-unwaited too.
- wgmma-operand-changed: shared memory a committed wgmma reads was stored to, or a copy was issued
  into it, before the warp's wgmma.wait_group covered it (the wgmma may still be reading it).
- dsmem-unsynchronized: a read of another block's shared memory (distributed shared memory) of a
  word its owner wrote, or never wrote, since the cluster's last barrier.cluster; or a block's
  read of its own word another block wrote since then. Tracked only in kernels that use mapa or
  shared::cluster accesses (ops_cluster.py turns it on when it binds them).
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
        self._dsmem_words = 0  # > 0: distributed shared memory is tracked, this many words per block
        self._epoch: dict[int, int] = {}  # block -> cluster barriers completed
        self._written: dict[int, np.ndarray] = {}  # block -> per word: [epoch, line] of its own last write
        self._remote: dict[int, np.ndarray] = {}  # block -> per word: [epoch, line] of another block's write

    # ---- what the ops tell ----------------------------------------------------------------------
    def barrier_init(self, blocks, offs) -> None:
        for b, f in zip(np.asarray(blocks).tolist(), np.asarray(offs).tolist()):
            self._seen.pop((b, (b, f)), None)

    def copy_issued(self, inst, block, lo, hi, key, phase, tid) -> None:
        for warp, _, wlo, whi, line in self._wgmma.get(block, ()):
            if wlo < hi and lo < whi:  # a tensor or bulk copy refills a stage a wgmma may still read
                addr = max(lo, wlo)
                msg = (f"the copy at {inst.file or '?'}:{inst.line} (thread {_fmt(_coords(tid, self._block))}) "
                       f"writes shared byte offset {addr}, which the wgmma.mma_async at line {line} (warp {warp}) "
                       "may still be reading: its group has not been retired by wgmma.wait_group. Release a "
                       "stage (arrive on its 'empty' mbarrier) only after the wait_group that covers the wgmmas "
                       "reading it, and have the producer wait on that barrier before the next copy")
                self._report("wgmma-operand-changed", inst, block, tid, addr, msg, line, warp * 32)
                break
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

    def wgmma_reads(self, inst, block, tids, ranges) -> None:
        """A warp's wgmma reads these shared byte ranges now: the same check as a thread's load
        against the copies still owed to their mbarriers (bulk-copy-unwaited / -overwrite)."""
        if block not in self._copies:
            return
        tids = np.asarray(tids, np.int64)
        for lo, hi in ranges:
            self._reads(inst, block, tids, np.full(len(tids), lo, np.int64), hi - lo)

    def wgmma_waited(self, block, warp, done_below) -> None:
        lst = self._wgmma.get(block)
        if lst:
            lst[:] = [w for w in lst if not (w[0] == warp and w[1] < done_below)]

    def track_dsmem(self, shared_bytes: int) -> None:
        self._dsmem_words = max(self._dsmem_words, (int(shared_bytes) + 3) // 4, 1)

    def _shadow(self, table, b) -> np.ndarray:
        s = table.get(b)
        if s is None:
            s = table[b] = np.full((self._dsmem_words, 2), -1, np.int64)
        return s

    def _words(self, offs, size):
        w = np.asarray(offs, np.int64) // 4
        return np.clip((w[:, None] + np.arange(max(1, size // 4))).ravel(), 0, self._dsmem_words - 1)

    def cluster_barrier(self, blocks) -> None:
        for b in np.asarray(blocks).tolist():
            if b >= 0:
                self._epoch[b] = self._epoch.get(b, 0) + 1

    def dsmem_access(self, inst, load, readers, tids, targets, offs, size) -> None:
        """Threads of blocks `readers` load from / store to shared memory of blocks `targets`."""
        for b in np.unique(targets).tolist():
            m = (targets == b) & (readers != b)
            if not m.any():
                continue
            words = self._words(offs[m], size)
            if not load:
                s = self._shadow(self._remote, b)
                s[words, 0], s[words, 1] = self._epoch.get(b, 0), -1 if inst.line is None else inst.line
                continue
            s = self._shadow(self._written, b)
            stale = s[words, 0] >= self._epoch.get(b, 0)
            unwritten = s[words, 0] < 0
            if (stale | unwritten).any():
                i = int(np.argmax(stale | unwritten))
                line = int(s[words[i], 1])
                reader, tid = int(readers[m][0]), int(tids[m][0])
                what = ("before its owner wrote it" if unwritten[i] else
                        f"which its owner wrote at line {line} with no cluster barrier since")
                msg = (f"thread {_fmt(_coords(tid, self._block))} of block {_fmt(_coords(reader, self._grid))} reads "
                       f"shared byte offset {int(words[i]) * 4} of block {_fmt(_coords(b, self._grid))} in its cluster "
                       f"({inst.file or '?'}:{inst.line}) {what}: the other block may not have written it yet. "
                       "Put cluster.sync() (barrier.cluster.arrive + barrier.cluster.wait) between the writes "
                       "and the reads through mapa / map_shared_rank")
                self._report("dsmem-unsynchronized", inst, reader, tid, int(words[i]) * 4, msg,
                             None if unwritten[i] else line, 0)

    # ---- what the engine shows ------------------------------------------------------------------
    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None) -> None:
        if space == "shared" and self._dsmem_words:
            self._local_dsmem(inst, op, np.asarray(blocks, np.int64), np.asarray(tids, np.int64),
                              np.asarray(addrs, np.int64), size)
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

    def _local_dsmem(self, inst, op, blocks, tids, a, size) -> None:
        """A block's own shared accesses: writes stamp the words with the cluster epoch; reads of
        words another block wrote in this epoch are dsmem-unsynchronized."""
        for b in np.unique(blocks).tolist():
            m = blocks == b
            words = self._words(a[m], size)
            if op != "ld":
                s = self._shadow(self._written, b)
                s[words, 0], s[words, 1] = self._epoch.get(b, 0), -1 if inst.line is None else inst.line
            elif b in self._remote:
                s = self._remote[b]
                stale = s[words, 0] >= self._epoch.get(b, 0)
                if stale.any():
                    i = int(np.argmax(stale))
                    tid = int(tids[m][0])
                    msg = (f"thread {_fmt(_coords(tid, self._block))} reads shared byte offset {int(words[i]) * 4} "
                           f"({inst.file or '?'}:{inst.line}) that another block of its cluster wrote at line "
                           f"{int(s[words[i], 1])} with no cluster barrier since: put cluster.sync() between the "
                           "remote writes and the reads")
                    self._report("dsmem-unsynchronized", inst, b, tid, int(words[i]) * 4, msg, int(s[words[i], 1]), 0)

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
            self._written.pop(b, None)
            self._remote.pop(b, None)
            self._epoch.pop(b, None)
            for k in [k for k in self._seen if k[0] == b]:
                del self._seen[k]


def _coords(linear: int, dims) -> tuple[int, int, int]:
    x, y = dims[0], dims[1]
    return (int(linear % x), int((linear // x) % y), int(linear // (x * y)))


def _fmt(xyz) -> str:
    return f"({xyz[0]},{xyz[1]},{xyz[2]})"
