"""What the H200 performance model needs from a run, on top of the counters: the global sectors
each block touched (in issue order, for the cache model), the addresses atomics hit (same-address
serialisation), barriers passed, and the blocks that ran. One summary per launch.

One Profile observer sees every launch of a run (it is passed to the Emulator as an extra
observer), so each launch's counters and records are closed into `launches` when it ends. The
records are capped (`max_records` sectors per launch): past the cap the cache model works on the
part recorded and the counters, which are never capped, carry the totals.
"""
from __future__ import annotations

import numpy as np

from .counters import Counters, family


class Profile(Counters):
    def __init__(self, max_records: int = 3_000_000, watch=None):
        self.max_records = int(max_records)
        self.launches: list[dict] = []
        # watch(grid) -> linear block ids whose warps' issues per instruction are kept apart (the
        # blocks holding a heavy item: their longest warp's chain, not the grid's average)
        self._watch_fn = watch
        super().__init__()

    def on_kernel_start(self, kernel, grid, block, shared_bytes) -> None:
        super().on_kernel_start(kernel, grid, block, shared_bytes)
        self._grid = tuple(int(v) for v in (tuple(grid) + (1, 1, 1))[:3])
        self._block = tuple(int(v) for v in (tuple(block) + (1, 1, 1))[:3])
        self._shared = int(shared_bytes)
        self._seq: list[np.ndarray] = []  # issue-order stamp of each record
        self._pc: list[np.ndarray] = []
        self._blk: list[np.ndarray] = []
        self._sec: list[np.ndarray] = []
        self._st: list[np.ndarray] = []
        self._recorded = 0
        self._calls = 0
        self._atom: list[np.ndarray] = []
        self._atom_n = 0
        self._atom_order: list[np.ndarray] = []  # (block, thread) of each recorded atomic lane
        self._atom_serial = 0  # per warp request, its most lanes on one address, summed
        self._atom_sectors = 0  # (warp request, sector) pairs of global atomics
        self._barriers = 0
        self._blocks: list[np.ndarray] = []
        self._satom: dict[int, int] = {}  # pc -> serialised steps of its shared atomics
        self._lines: dict[int, int] = {}  # pc -> 128-byte lines its global requests touched, per warp
        # instructions each warp issued (warp = linear block x warps per block + tid // 32): the
        # busiest warp's chain, not the average, sets the time of a grid with uneven work
        self._warp_issues = np.zeros(64, np.int64)
        self._watched = np.asarray(self._watch_fn(self._grid), np.int64) if self._watch_fn else np.zeros(0, np.int64)
        self._watch_pcs: dict[int, int] = {}  # pc -> warp instructions the watched blocks issued
        self._prev_sector: dict[int, dict] = {}  # pc -> watched lane -> sector of its last load there
        self._stream: dict[int, list] = {}  # pc -> [loads of the lane's previous sector, loads] (watched)

    def on_issue(self, inst, blocks, tids) -> None:
        super().on_issue(inst, blocks, tids)
        if len(tids) == 0:
            return
        if self._watched.size and int(blocks[0]) <= self._watched[-1] and int(blocks[-1]) >= self._watched[0]:
            inside = np.isin(np.asarray(blocks, np.int64), self._watched)
            if inside.any():
                w = self._warps(np.asarray(blocks)[inside], np.asarray(tids)[inside])
                self._watch_pcs[inst.pc] = self._watch_pcs.get(inst.pc, 0) + int(np.unique(w).size)
        first = int(blocks[0]) * self._wpb + int(tids[0]) // 32
        last = int(blocks[-1]) * self._wpb + int(tids[-1]) // 32
        if self._whole_warps(blocks, tids) or last == first:
            self._grow(last)
            self._warp_issues[first:last + 1] += 1
            return
        w = self._warps(blocks, tids)  # a warp's lanes are neighbours in the engine's lane order
        self._grow(int(w.max()))
        self._warp_issues[w[np.concatenate(([True], w[1:] != w[:-1]))]] += 1

    def _grow(self, top: int) -> None:
        if top >= self._warp_issues.size:
            grown = np.zeros(max(top + 1, 2 * self._warp_issues.size), np.int64)
            grown[:self._warp_issues.size] = self._warp_issues
            self._warp_issues = grown

    def on_block_start(self, blocks) -> None:
        self._blocks.append(np.asarray(blocks, np.int64).copy())

    def on_barrier(self, blocks) -> None:
        self._barriers += len(blocks)

    _bulk = False  # inside on_bulk_read

    def on_bulk_read(self, inst, block, tid, sectors) -> None:
        """Counted by Counters; recorded here for the cache model like a load of those sectors."""
        super().on_bulk_read(inst, block, tid, sectors)
        n = len(sectors)
        self._bulk = True
        try:
            self.on_memory(inst, "global", "ld", np.full(n, block, np.int64), np.full(n, tid, np.int64),
                           np.asarray(sectors, np.uint64), 32)
        finally:
            self._bulk = False

    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None) -> None:
        if not self._bulk:
            super().on_memory(inst, space, op, blocks, tids, addrs, size)
        if space == "shared" and op == "atom" and len(tids):
            # lanes of one warp on one shared address serialise: the request costs its worst count
            w = np.asarray(blocks, np.int64) * self._wpb + np.asarray(tids, np.int64) // 32
            key = np.unique(w * (1 << 32) + (np.asarray(addrs, np.int64) & 0xFFFFFFFF), return_counts=True)
            worst = np.zeros(0, np.int64)
            if key[0].size:
                order = key[0] >> 32
                starts = np.flatnonzero(np.concatenate(([True], order[1:] != order[:-1])))
                worst = np.maximum.reduceat(key[1], starts)
            self._satom[inst.pc] = self._satom.get(inst.pc, 0) + int(worst.sum())
        if space != "global" or len(tids) == 0:
            return
        self._calls += 1
        a = np.asarray(addrs, np.uint64).astype(np.int64)
        if op == "ld" and self._watched.size:
            self._watch_stream(inst.pc, blocks, tids, a)
        if op == "atom":
            w = np.asarray(blocks, np.int64) * self._wpb + np.asarray(tids, np.int64) // 32
            # the L2 takes a warp's atomics as one request per sector; lanes of one warp on one
            # address are applied one after another (a serial chain of read-modify-writes)
            per_warp_addr = np.unique(w * (1 << 40) + (a & ((1 << 40) - 1)), return_counts=True)
            owner = per_warp_addr[0] >> 40
            starts = np.flatnonzero(np.concatenate(([True], owner[1:] != owner[:-1])))
            self._atom_serial += int(np.maximum.reduceat(per_warp_addr[1], starts).sum())
            self._atom_sectors += int(np.unique(w * (1 << 40) + ((a >> 5) & ((1 << 40) - 1))).size)
            if self._atom_n < self.max_records:
                self._atom.append(a.copy())
                self._atom_order.append(np.asarray(blocks, np.int64) * (1 << 20) + np.asarray(tids, np.int64))
                self._atom_n += a.size
            return
        if self._recorded >= self.max_records:
            return
        b = np.asarray(blocks, np.int64)
        # One record per (block, sector) of this issued group: lanes of one block touching one
        # sector are one cache access (the L1 merges them), the sector straddled by a wide or
        # misaligned access included.
        first, last = a >> 5, (a + int(size) - 1) >> 5
        sec = first if not (last != first).any() else np.concatenate((first, last[last != first]))
        blk = b if sec is first else np.concatenate((b, b[last != first]))
        # L1 wavefronts: a warp's request costs one per distinct 128-byte line it touches (a TMA
        # copy's bytes go from L2 to shared memory, past L1: none)
        w = b * self._wpb + np.asarray(tids, np.int64) // 32
        wl = w if sec is first else np.concatenate((w, w[last != first]))
        if not self._bulk:
            self._lines[inst.pc] = self._lines.get(inst.pc, 0) + int(
                np.unique(wl * (1 << 40) + ((sec >> 2) & ((1 << 40) - 1))).size)
        key = np.unique(blk * (1 << 40) + (sec & ((1 << 40) - 1)))
        n = key.size
        self._seq.append(np.full(n, self._calls, np.int64))
        self._pc.append(np.full(n, inst.pc, np.int32))
        self._blk.append(key >> 40)
        self._sec.append(key & ((1 << 40) - 1))
        self._st.append(np.full(n, op == "st", bool))
        self._recorded += n

    def _watch_stream(self, pc: int, blocks, tids, addrs) -> None:
        """A watched lane's load of the sector its previous load at this pc read (a thread walking
        its own row): the L1 serves it at any problem size, unlike a gather's reuse."""
        inside = np.isin(np.asarray(blocks, np.int64), self._watched)
        if not inside.any():
            return
        keys = np.asarray(blocks, np.int64)[inside] * 4096 + np.asarray(tids, np.int64)[inside]
        sectors = addrs[inside] >> 5
        prev = self._prev_sector.setdefault(pc, {})
        hits = 0
        for key, sec in zip(keys.tolist(), sectors.tolist()):
            hits += prev.get(key) == sec
            prev[key] = sec
        row = self._stream.setdefault(pc, [0, 0])
        row[0] += hits
        row[1] += int(keys.size)

    def _watch_summary(self) -> dict | None:
        """The watched blocks that ran: their count, each warp's issues, each instruction's issues."""
        ran = np.intersect1d(self._watched, np.concatenate(self._blocks) if self._blocks else np.zeros(0, np.int64))
        if not ran.size or not self._watch_pcs:
            return None
        warps = (ran[:, None] * self._wpb + np.arange(self._wpb)[None, :]).reshape(-1)
        issues = self._warp_issues[warps[warps < self._warp_issues.size]]
        return {"blocks": int(ran.size), "warp_issues": issues[issues > 0].copy(), "pcs": dict(self._watch_pcs),
                "stream": {pc: tuple(v) for pc, v in self._stream.items()}}

    def on_kernel_end(self) -> None:
        super().on_kernel_end()
        cat = (lambda xs, t: np.concatenate(xs) if xs else np.zeros(0, t))
        atoms = cat(self._atom, np.int64)
        same = int(np.unique(atoms, return_counts=True)[1].max()) if atoms.size else 0
        hot = int(np.bincount(np.unique(atoms, return_inverse=True)[1]).argmax()) if atoms.size else 0
        # addresses that never fall as the thread index rises (y[row of this thread], a per-row
        # sum): each address belongs to a stretch of the grid, not to every block
        order = np.argsort(cat(self._atom_order, np.int64), kind="stable")
        monotone = bool(atoms.size) and bool((np.diff(atoms[order]) >= 0).all())
        self.launches.append({
            "kernel": self.kernel, "grid": self._grid, "block": self._block, "shared": self._shared,
            "blocks_run": cat(self._blocks, np.int64),
            "rows": {pc: row.copy() for pc, row in self._rows.items()},
            "meta": dict(self._meta),
            "families": {pc: family(m[0]) for pc, m in self._meta.items()},
            "records": {"seq": cat(self._seq, np.int64), "pc": cat(self._pc, np.int32),
                        "block": cat(self._blk, np.int64), "sector": cat(self._sec, np.int64),
                        "store": cat(self._st, bool)},
            "truncated": self._recorded >= self.max_records,
            "atomic_lanes": int(atoms.size), "atomic_same_address_max": same,
            "atomic_hot_address": int(np.unique(atoms)[hot]) if atoms.size else 0, "atomic_monotone": monotone,
            "atomic_serial": self._atom_serial, "atomic_sectors": self._atom_sectors,
            "atomic_lines": int(np.unique(atoms >> 7).size),
            "warp_issues": self._warp_issues[self._warp_issues > 0].copy(),
            "watch": self._watch_summary(),
            "barriers": self._barriers, "shared_atomic_cost": dict(self._satom), "lines": dict(self._lines),
        })
