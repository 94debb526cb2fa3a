"""Memory and issue counters per instruction and per source line, from the engine's observer hooks.

What a profiler would tell the learner, computed exactly from the addresses each warp touched:

- global: requests (one per warp per instruction), 32-byte sectors touched, and the ideal sector
  count for the distinct addresses the lanes asked for (ceil(distinct x size / 32): lanes reading
  one value, a broadcast, ideally cost one access); bytes the lanes asked for.
- shared: requests and wavefronts. 32 banks of 4 bytes; a request costs as many wavefronts as the
  most distinct words any one bank must serve (lanes reading the same word share it). 8- and
  16-byte accesses are split into 2 and 4 phases of 16 and 8 lanes, as the hardware does, so a
  conflict-free float4 access costs 4 wavefronts and that is also its ideal.
- issue: warp instructions, active lanes (branch efficiency = lanes / (32 x warp instructions)),
  and the instruction mix by opcode family.

Issued groups span warps and blocks; a warp is (linear block, tid // 32).
"""
from __future__ import annotations

import numpy as np

from .observer import Observer
from .tally import _FIELDS, _IX, Tally, _tally, family
from .warp_costs import _distinct, _distinct_per_group, _group_sizes, _pair_keys, _sorted_keys, _warp_costs

_NO_ADDRS = np.zeros(1 << 16, np.int64)  # on_issue has no addresses; the numba pass ignores them
#: a split vector is merged up to this many bytes a lane: a float4, the widest global access
VECTOR_BYTES = 16
#: the pieces of a split vector are a few instructions apart (Triton: a mov, then a predicated load)
SPLIT_GAP = 4


class Counters(Observer):
    """Counts per instruction; `per_line`, `total`, `mix` and `to_dict()` summarise them."""

    findings: list = []  # counters never find problems; the attribute keeps the hook contract

    def __init__(self, jit: bool = True) -> None:
        self.jit = jit  # use the numba pass when numba is installed (tests compare both paths)
        self.on_kernel_start("", (1, 1, 1), (1, 1, 1), 0)

    def on_kernel_start(self, kernel, grid, block, shared_bytes) -> None:
        block = tuple(int(v) for v in (tuple(block) + (1, 1, 1))[:3])
        self.kernel = kernel
        self._tpb = block[0] * block[1] * block[2]
        self._wpb = (self._tpb + 31) // 32
        self._rows: dict[int, np.ndarray] = {}  # pc -> counters (see _FIELDS)
        self._meta: dict[int, tuple[str, str | None, int | None]] = {}  # pc -> opcode, file, line
        # (op, file, line, size, first lane) -> that group's last global request of the line: (pc, blocks, tids, first
        # addresses, bytes spanned, (requests, sectors, ideal) of that span); see _global_request
        self._spans: dict[int, tuple] = {}

    def _row(self, inst) -> np.ndarray:
        row = self._rows.get(inst.pc)
        if row is None:
            row = self._rows[inst.pc] = np.zeros(len(_FIELDS), np.int64)
            self._meta[inst.pc] = (inst.opcode, inst.file, inst.line)
        return row

    def _warps(self, blocks, tids) -> np.ndarray:
        return np.asarray(blocks, np.int64) * self._wpb + np.asarray(tids, np.int64) // 32

    def _whole_warps(self, blocks, tids) -> int:
        """Warps in a group of whole warps, in O(1): the engine hands lanes over in lane order,
        each lane once, so when the lane count fills every warp from the first lane's to the
        last lane's, that range is the answer. 0 when the shortcut does not apply."""
        n = len(tids)
        if self._tpb % 32 or n % 32:
            return 0
        first = int(blocks[0]) * self._wpb + int(tids[0]) // 32
        last = int(blocks[-1]) * self._wpb + int(tids[-1]) // 32
        span = last - first + 1
        ok = span > 0 and n == 32 * span and int(tids[0]) % 32 == 0 and int(tids[-1]) % 32 == 31
        return span if ok else 0

    def _fast(self, kind, blocks, tids, addrs, size):
        """(requests, cost, ideal) from the numba pass, or None to count with numpy."""
        if kind == 0 and (whole := self._whole_warps(blocks, tids)):
            return whole, 0, 0
        if _warp_costs is None or not self.jit:
            return None
        out = np.zeros(3, np.int64)
        addrs = np.asarray(addrs)
        addrs = addrs.view(np.int64) if addrs.dtype == np.uint64 else addrs.astype(np.int64)
        ok = _warp_costs(kind, np.asarray(blocks), np.asarray(tids), addrs, int(size), self._wpb, out)
        return (int(out[0]), int(out[1]), int(out[2])) if ok else None

    # ---- hooks -----------------------------------------------------------------------------
    def on_issue(self, inst, blocks, tids) -> None:
        n = len(tids)
        if n == 0:
            return
        row = self._row(inst)
        fast = self._fast(0, blocks, tids, _NO_ADDRS[:n] if n <= _NO_ADDRS.size else np.zeros(n, np.int64), 4)
        row[0] += fast[0] if fast else _distinct(self._warps(blocks, tids))
        row[1] += n

    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None) -> None:
        if len(tids) == 0:
            return
        row = self._row(inst)
        size = int(size)
        if space == "global" and op in ("ld", "st"):
            self._add_fast(row, space, op, self._global_request(inst, op, blocks, tids, addrs, size), len(tids) * size)
            return
        kind = {"global": 1, "shared": 2}.get(space, 0) if op != "atom" else 0
        fast = self._fast(kind, blocks, tids, addrs, size)
        if fast is not None:
            self._add_fast(row, space, op, fast, len(tids) * size)
            return
        warps = self._warps(blocks, tids)
        if space == "global":
            self._global(row, op, warps, np.asarray(addrs, np.uint64).astype(np.int64), size)
        elif space == "shared":
            if op == "atom":
                row[_IX["shared_atomic_requests"]] += _distinct(warps)
            else:
                self._shared_periodic(row, np.asarray(blocks, np.int64), warps, np.asarray(tids, np.int64),
                                      np.asarray(addrs, np.int64), size)
        elif space == "local":
            row[_IX["local_requests"]] += _distinct(warps)

    def on_bulk_read(self, inst, block, tid, sectors) -> None:
        """A TMA copy's global sectors: one load request of exactly those sectors (its ideal)."""
        n = len(sectors)
        if n:
            row = self._row(inst)
            row[_IX["global_load_requests"]] += 1
            row[_IX["global_load_sectors"]] += n
            row[_IX["global_load_ideal_sectors"]] += n
            row[_IX["bytes_read"]] += 32 * n

    def _global_request(self, inst, op, blocks, tids, addrs, size) -> tuple[int, int, int]:
        """(requests, sectors, ideal sectors) of one global load or store instruction.

        A vector load the compiler split into scalars (Triton's masked `tl.load` of 4 floats a
        lane: ld.global.b32 at +0, +4, +8, +12 from one address, on one source line, a few
        instructions apart) is counted as the vector it is: the sectors and ideal of the whole span, spread over
        its requests. Counted one by one, a lane stride of 16 bytes made each request touch 16
        sectors against an ideal of 4, and a coalesced kernel read as uncoalesced (issue 28). The
        later pieces find their sectors in L1, so each sector comes from L2 once. Stores are
        counted one by one: L1 does not keep them, and each split store sends its partial sectors
        to L2, which is the cost the count shows."""
        base = np.asarray(addrs)
        base = base.view(np.int64) if base.dtype == np.uint64 else base.astype(np.int64)
        # the engine may interleave groups of warps at the same code: each group's own last request
        key = (op, inst.file, inst.line, size, int(blocks[0]), int(tids[0]))
        prev = self._spans.get(key) if op == "ld" else None  # stores: below
        if (prev is not None and 0 < inst.pc - prev[0] <= SPLIT_GAP and prev[4] + size <= VECTOR_BYTES
                and self._continues(prev, blocks, tids, base)):
            # counted over the first piece's lanes: a lane the tail mask turned off for a later
            # piece counts as loading it, in the measured sectors and in the ideal alike
            span = prev[4] + size
            whole = self._global_costs(prev[1], prev[2], prev[3], span)
            self._spans[key] = (inst.pc, prev[1], prev[2], prev[3], span, whole)
            return whole[0], whole[1] - prev[5][1], whole[2] - prev[5][2]
        costs = self._global_costs(blocks, tids, base, size)
        self._spans[key] = (inst.pc, blocks, tids, base, size, costs)
        return costs

    def _continues(self, prev, blocks, tids, base) -> bool:
        """Whether these lanes (all of them among the previous piece's) read right after it."""
        if len(tids) == len(prev[2]) and np.array_equal(tids, prev[2]) and np.array_equal(blocks, prev[1]):
            return bool(np.array_equal(base, prev[3] + prev[4]))
        if len(tids) > len(prev[2]):
            return False
        before = np.asarray(prev[1], np.int64) * self._tpb + np.asarray(prev[2], np.int64)
        now = np.asarray(blocks, np.int64) * self._tpb + np.asarray(tids, np.int64)
        at = np.searchsorted(before, now)
        if (at >= before.size).any() or not np.array_equal(before[at], now):
            return False
        return bool(np.array_equal(base, prev[3][at] + prev[4]))

    def _global_costs(self, blocks, tids, addrs, size) -> tuple[int, int, int]:
        fast = self._fast(1, blocks, tids, addrs, size)
        if fast is not None:
            return fast
        warps = self._warps(blocks, tids)
        first, last = addrs >> 5, (addrs + size - 1) >> 5
        sectors, w = first, warps
        if (last != first).any():  # a misaligned or wide access straddles two sectors
            more = last != first
            sectors = np.concatenate((first, last[more]))
            w = np.concatenate((warps, warps[more]))
        # the ideal counts distinct addresses: lanes reading one value (a broadcast) need one access
        ideal = int(((_distinct_per_group(warps, addrs) * size + 31) // 32).sum())
        return int(_group_sizes(warps).size), int(_distinct(_pair_keys(w, sectors))), ideal

    def _add_fast(self, row, space, op, fast, nbytes) -> None:
        req, cost, ideal = fast
        if space == "global":
            if op == "atom":
                row[_IX["global_atomic_requests"]] += req
                row[_IX["bytes_read"]] += nbytes
                row[_IX["bytes_written"]] += nbytes
                return
            kind = "load" if op == "ld" else "store"
            row[_IX[f"global_{kind}_requests"]] += req
            row[_IX[f"global_{kind}_sectors"]] += cost
            row[_IX[f"global_{kind}_ideal_sectors"]] += ideal
            row[_IX["bytes_read" if op == "ld" else "bytes_written"]] += nbytes
        elif space == "shared":
            if op == "atom":
                row[_IX["shared_atomic_requests"]] += req
                return
            row[_IX["shared_requests"]] += req
            row[_IX["shared_wavefronts"]] += cost
            row[_IX["shared_ideal_wavefronts"]] += ideal
        elif space == "local":
            row[_IX["local_requests"]] += req

    def _global(self, row, op, warps, addrs, size) -> None:
        """Global atomics (loads and stores: _global_request)."""
        n = warps.size
        row[_IX["global_atomic_requests"]] += _distinct(warps)
        row[_IX["bytes_read"]] += n * size
        row[_IX["bytes_written"]] += n * size

    def _shared_periodic(self, row, blocks, warps, tids, addrs, size) -> None:
        """Shared offsets are relative to each block's window, so the blocks of one issued group
        usually repeat the same (tid, offset) pattern: count one block and scale."""
        n = blocks.size
        if n > 64 and blocks[0] != blocks[-1]:
            per = int(np.searchsorted(blocks, blocks[0], side="right"))
            if n % per == 0 and per < n:
                nb = n // per
                shape = (nb, per)
                if ((tids.reshape(shape) == tids[:per]).all() and (addrs.reshape(shape) == addrs[:per]).all()
                        and (blocks[::per][1:] > blocks[::per][:-1]).all()
                        and (blocks.reshape(shape) == blocks[::per, None]).all()):
                    one = np.zeros_like(row)
                    self._shared(one, warps[:per], tids[:per], addrs[:per], size)
                    row += one * nb
                    return
        self._shared(row, warps, tids, addrs, size)

    def _shared(self, row, warps, tids, addrs, size) -> None:
        phases = max(1, size // 4)  # 8 B: two half-warp phases; 16 B: four quarter-warp phases
        group = warps * phases + (tids & 31) // (32 // phases)
        words = addrs >> 2
        nw = max(1, (size + 3) // 4)
        if nw > 1:
            words = (words[:, None] + np.arange(nw)).ravel()
            group = np.repeat(group, nw)
        # Shared offsets lie inside one block's window (< 2^18 words), so (group, word) packs
        # into one int64; sorting then leaves each distinct word of each phase group once.
        w0, g0 = words.min(), group.min()
        span = int(words.max() - w0) + 1
        keys = _sorted_keys((group - g0) * span + (words - w0))
        keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))]
        g = keys // span
        bank = (keys % span + w0) & 31
        g_rank = np.concatenate(([0], np.cumsum(g[1:] != g[:-1])))
        per_bank = np.bincount(g_rank * 32 + bank, minlength=(int(g_rank[-1]) + 1) * 32)
        lanes = _group_sizes(warps)
        row[_IX["shared_requests"]] += lanes.size
        row[_IX["shared_wavefronts"]] += int(per_bank.reshape(-1, 32).max(axis=1).sum())
        row[_IX["shared_ideal_wavefronts"]] += int(np.maximum(1, (lanes * size + 127) // 128).sum())

    # ---- summaries -------------------------------------------------------------------------
    @property
    def per_instruction(self) -> list[tuple[int, str, Tally]]:
        """(pc, opcode, counters) for every instruction that ran, in program order."""
        return [(pc, self._meta[pc][0], _tally(self._meta[pc][1], self._meta[pc][2], self._rows[pc]))
                for pc in sorted(self._rows)]

    @property
    def per_location(self) -> dict[tuple[str | None, int | None], Tally]:
        """Counters summed over the instructions of each (file, line), every file included."""
        sums: dict[tuple, np.ndarray] = {}
        for pc, row in self._rows.items():
            key = self._meta[pc][1:]
            sums[key] = sums.get(key, 0) + row
        return {key: _tally(key[0], key[1], row) for key, row in
                sorted(sums.items(), key=lambda kv: (kv[0][1] is None, kv[0][1] or 0, str(kv[0][0])))}

    @property
    def per_line(self) -> dict[int | None, Tally]:
        """Counters per line of the kernel's own file (the file most instructions come from).
        Lines of other files (a header's inlined code, if the PTX names one) are left out here,
        so two files' line numbers never merge; `total` and `per_location` still count them."""
        where = self.per_location
        weight: dict[str | None, int] = {}
        for (file, _), t in where.items():
            weight[file] = weight.get(file, 0) + t.instructions
        own = max(weight, key=weight.get) if weight else None
        return {line: t for (file, line), t in where.items() if file == own}

    @property
    def total(self) -> Tally:
        row = sum(self._rows.values(), np.zeros(len(_FIELDS), np.int64))
        return _tally(None, None, row)

    @property
    def mix(self) -> dict[str, int]:
        """Warp instructions issued per opcode family, most frequent first."""
        out: dict[str, int] = {}
        for pc, row in self._rows.items():
            fam = family(self._meta[pc][0])
            out[fam] = out.get(fam, 0) + int(row[0])
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "total": self.total.to_dict(), "mix": self.mix,
                "per_line": [t.to_dict() for t in self.per_location.values()]}

