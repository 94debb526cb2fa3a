"""Memory and issue counters per instruction and per source line, from the engine's observer hooks.

The module is longer than ~300 lines: the per-warp sector, wavefront and issue tallies share one
numba lane loop and its numpy fallback; splitting them by concern is the next step.

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

from dataclasses import asdict, dataclass

import numpy as np

from .observer import Observer

_SPACES = ("global", "shared", "local", "const", "param")
_FIELDS = ("instructions", "active_lanes",
           "global_load_requests", "global_load_sectors", "global_load_ideal_sectors",
           "global_store_requests", "global_store_sectors", "global_store_ideal_sectors",
           "global_atomic_requests", "shared_requests", "shared_wavefronts", "shared_ideal_wavefronts",
           "shared_atomic_requests", "local_requests", "bytes_read", "bytes_written")
_IX = {name: i for i, name in enumerate(_FIELDS)}
_NO_ADDRS = np.zeros(1 << 16, np.int64)  # on_issue has no addresses; the numba pass ignores them


@dataclass(frozen=True)
class Tally:
    """Counters of one instruction, one source line, or a whole launch."""

    file: str | None  # the learner's file (None for the launch total)
    line: int | None  # 1-based line, None for the launch total or code without .loc
    instructions: int  # warp instructions issued
    active_lanes: int  # lanes active over those instructions
    global_load_requests: int  # warp-level global load requests
    global_load_sectors: int  # 32-byte sectors those requests touched
    global_load_ideal_sectors: int  # ceil(distinct addresses x bytes / 32) per request: perfect coalescing
    global_store_requests: int
    global_store_sectors: int
    global_store_ideal_sectors: int
    global_atomic_requests: int  # atom/red on global memory (warp-level)
    shared_requests: int  # warp-level shared loads and stores
    shared_wavefronts: int  # bank-conflict cost of those requests
    shared_ideal_wavefronts: int  # ceil(active lanes x bytes / 128) per request: no conflicts
    shared_atomic_requests: int
    local_requests: int  # local memory (stack, spills) warp-level requests
    bytes_read: int  # global bytes the lanes loaded (atomics count both ways)
    bytes_written: int  # global bytes the lanes stored

    @property
    def branch_efficiency(self) -> float:
        """Active lanes per issued warp instruction over 32 (1.0: no divergence, full warps)."""
        return self.active_lanes / (32 * self.instructions) if self.instructions else 1.0

    @property
    def sectors_per_load_request(self) -> float:
        return self.global_load_sectors / self.global_load_requests if self.global_load_requests else 0.0

    @property
    def sectors_per_store_request(self) -> float:
        return self.global_store_sectors / self.global_store_requests if self.global_store_requests else 0.0

    @property
    def wavefronts_per_shared_request(self) -> float:
        return self.shared_wavefronts / self.shared_requests if self.shared_requests else 0.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(branch_efficiency=round(self.branch_efficiency, 4),
                 sectors_per_load_request=round(self.sectors_per_load_request, 3),
                 sectors_per_store_request=round(self.sectors_per_store_request, 3),
                 wavefronts_per_shared_request=round(self.wavefronts_per_shared_request, 3))
        return d


def _tally(file, line, row: np.ndarray) -> Tally:
    return Tally(file, line, *(int(v) for v in row))


def family(opcode: str) -> str:
    """The opcode family for the instruction mix: the base opcode, plus the state space for
    memory operations (ld.global and ld.shared cost very differently)."""
    parts = opcode.split(".")
    if parts[0] in ("ld", "st", "atom", "red", "ldu") and len(parts) > 1 and parts[1] in _SPACES:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _sorted_keys(keys: np.ndarray) -> np.ndarray:
    if keys.size > 1 and (keys[1:] < keys[:-1]).any():
        return np.sort(keys)
    return keys


def _group_sizes(keys: np.ndarray) -> np.ndarray:
    """How many entries each distinct key has (order of keys is irrelevant)."""
    k = _sorted_keys(keys)
    if k.size == 0:
        return np.zeros(0, np.int64)
    edges = np.flatnonzero(k[1:] != k[:-1]) + 1
    return np.diff(np.concatenate(([0], edges, [k.size])))


def _pair_keys(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One sortable int64 per (a, b) pair, ordered by a then b."""
    a0, b0 = a.min(), b.min()
    span = int(b.max() - b0) + 1
    if span * (int(a.max() - a0) + 1) < 2**62:
        return (a - a0) * span + (b - b0)
    order = np.lexsort((b, a))  # vast address ranges: rank the pairs instead of packing them
    ranks = np.empty(a.size, np.int64)
    a_s, b_s = a[order], b[order]
    new = np.concatenate(([True], (a_s[1:] != a_s[:-1]) | (b_s[1:] != b_s[:-1])))
    ranks[order] = np.cumsum(new) - 1
    return ranks


def _distinct_per_group(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Distinct values per group, in the order of the sorted groups (as _group_sizes)."""
    order = np.lexsort((values, groups))
    g, v = groups[order], values[order]
    new = np.concatenate(([True], (g[1:] != g[:-1]) | (v[1:] != v[:-1])))
    return _group_sizes(g[new])


def _distinct(keys: np.ndarray) -> int:
    k = _sorted_keys(keys)
    return int(k.size and 1 + np.count_nonzero(k[1:] != k[:-1]))


def _warp_costs(kind, blocks, tids, addrs, size, wpb, out):
    """One pass over lanes that arrive warp by warp (the engine's order): kind 0 counts warp
    requests; 1 adds global sectors and their ideal; 2 shared wavefronts and their ideal.
    out = (requests, sectors or wavefronts, ideal). False when a warp's lanes are not adjacent,
    and the numpy path counts instead."""
    phases = max(1, size // 4) if kind == 2 else 1
    per_phase = 32 // phases
    nw = max(1, (size + 3) // 4)
    table = np.empty((32, 128), np.int64)  # distinct words per bank in the current phase
    cnt = np.zeros(32, np.int64)
    sect = np.empty(64, np.int64)  # distinct sectors of the current warp
    nsect = 0
    seen_addr = np.empty(32, np.int64)  # distinct addresses of the current warp (a broadcast is one)
    naddr = 0
    req = 0
    cost = 0
    ideal = 0
    lanes = 0
    prev_key = -1
    prev_group = -1
    for i in range(tids.shape[0]):
        key = np.int64(blocks[i]) * wpb + np.int64(tids[i]) // 32
        if key < prev_key:
            return False
        group = key * 4 + (np.int64(tids[i]) & 31) // per_phase
        if kind == 2 and group != prev_group and prev_group >= 0:
            cost += cnt.max()
            cnt[:] = 0
        if key != prev_key:
            if prev_key >= 0:
                ideal += max(1, (lanes * size + 127) // 128) if kind == 2 else (naddr * size + 31) // 32
            cost += nsect
            nsect = 0
            naddr = 0
            lanes = 0
            req += 1
        prev_key = key
        prev_group = group
        lanes += 1
        a = addrs[i]
        if kind == 1:
            dup = False
            for j in range(naddr):
                if seen_addr[j] == a:
                    dup = True
                    break
            if not dup and naddr < 32:
                seen_addr[naddr] = a
                naddr += 1
            for sc in range(a >> 5, ((a + size - 1) >> 5) + 1):
                seen = False
                for j in range(nsect):
                    if sect[j] == sc:
                        seen = True
                        break
                if not seen:
                    sect[nsect] = sc
                    nsect += 1
        elif kind == 2:
            for k in range(nw):
                word = (a >> 2) + k
                b = word & 31
                seen = False
                for j in range(cnt[b]):
                    if table[b, j] == word:
                        seen = True
                        break
                if not seen:
                    table[b, cnt[b]] = word
                    cnt[b] += 1
    if prev_key >= 0:
        ideal += max(1, (lanes * size + 127) // 128) if kind == 2 else (naddr * size + 31) // 32
        cost += nsect + (cnt.max() if kind == 2 else 0)
    out[0] = req
    out[1] = cost
    out[2] = ideal
    return True


try:  # numba is optional: the numpy path below counts the same, slower
    import numba

    _warp_costs = numba.njit(cache=True)(_warp_costs)
except ImportError:
    _warp_costs = None


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

    def on_memory(self, inst, space, op, blocks, tids, addrs, size) -> None:
        if len(tids) == 0:
            return
        row = self._row(inst)
        size = int(size)
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
        n = warps.size
        if op == "atom":
            row[_IX["global_atomic_requests"]] += _distinct(warps)
            row[_IX["bytes_read"]] += n * size
            row[_IX["bytes_written"]] += n * size
            return
        first, last = addrs >> 5, (addrs + size - 1) >> 5
        sectors = first
        w = warps
        if (last != first).any():  # a misaligned or wide access straddles two sectors
            more = last != first
            sectors = np.concatenate((first, last[more]))
            w = np.concatenate((warps, warps[more]))
        lanes = _group_sizes(warps)
        # the ideal counts distinct addresses: lanes reading one value (a broadcast) need one access
        distinct = _distinct_per_group(warps, addrs)
        ideal = int(((distinct * size + 31) // 32).sum())
        touched = _distinct(_pair_keys(w, sectors))
        kind = "load" if op == "ld" else "store"
        row[_IX[f"global_{kind}_requests"]] += lanes.size
        row[_IX[f"global_{kind}_sectors"]] += touched
        row[_IX[f"global_{kind}_ideal_sectors"]] += ideal
        row[_IX["bytes_read" if op == "ld" else "bytes_written"]] += n * size

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

