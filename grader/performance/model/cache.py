"""A sector-level cache model: which 32-byte sectors the blocks touched hit in L1, hit in L2, or
come from DRAM.

- L1 belongs to an SM, and a block runs on one SM: a sector a block already loaded is an L1 hit
  (loads only: stores write through to L2), while the block's distinct sectors fit its share of
  the L1 left after shared memory.
- L2 is shared by every SM. Blocks start in linear order, `concurrency` at a time (the resident
  blocks of the whole GPU), so block i runs in wave i // concurrency; inside a wave the
  emulator's issue stamps order the accesses in time. That timeline is cut into short epochs
  (EPOCH_SHARE of the L2). Within an epoch a sector's second and later touches hit (the blocks of
  a tiled matmul read the same tile of A at nearly the same time). A sector touched in an earlier
  epoch hits if fewer than the L2's capacity of other sectors were touched in between (stack
  distance at epoch granularity), else it is read from DRAM again: a warp that reads its row
  twice, once to reduce and once to write, while every resident warp reads its own row between
  the two, reads it from DRAM twice when the resident rows outgrow the L2 (rmsnorm's warp per
  row), as it does on the H200. A sector stored is written back to DRAM once per such lifetime.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SECTOR = 32
#: an epoch of the L2 model's timeline: this share of the L2's sectors in accesses (so a re-touch
#: within one is nearer than the capacity, and one across epochs is judged by what came between)
EPOCH_SHARE = 0.125


@dataclass(frozen=True)
class CacheResult:
    per_pc: dict  # pc -> {"l1_hits", "l2_hits", "dram_sectors", "accesses"} over the records
    accesses: int  # records (block, sector) modelled
    l1_hits: int
    l2_hits: int
    dram_read_sectors: int
    dram_write_sectors: int

    @property
    def dram_bytes(self) -> int:
        return SECTOR * (self.dram_read_sectors + self.dram_write_sectors)


def _first_flags(keys: np.ndarray, order_key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index order sorted by key then order_key, True where an entry is its key's first)."""
    order = np.lexsort((order_key, keys))
    k = keys[order]
    first = np.ones(k.size, bool)
    first[1:] = k[1:] != k[:-1]
    return order, first


def simulate(rec: dict, concurrency: int, l2_sectors: float, l1_sectors_per_block: float) -> CacheResult:
    seq, pc, blk, sec, st = (rec[k] for k in ("seq", "pc", "block", "sector", "store"))
    n = int(sec.size)
    if n == 0:
        return CacheResult({}, 0, 0, 0, 0, 0)
    # block -> wave by order of first appearance (the order blocks started in)
    ub, first_at = np.unique(blk, return_index=True)
    rank = np.empty(ub.size, np.int64)
    rank[np.argsort(first_at, kind="stable")] = np.arange(ub.size)
    wave = rank[np.searchsorted(ub, blk)] // max(1, int(concurrency))

    # L1: loads a block repeats, while its distinct sectors fit its share of L1
    l1_hit = np.zeros(n, bool)
    loads = np.flatnonzero(~st)
    if loads.size:
        key = blk[loads] * (1 << 40) + sec[loads]
        order, first = _first_flags(key, seq[loads])
        distinct_per_block = np.bincount(np.searchsorted(ub, blk[loads][order][first]), minlength=ub.size)
        fit = np.minimum(1.0, l1_sectors_per_block / np.maximum(1, distinct_per_block))
        repeat = loads[order][~first]
        # a block whose sectors overflow its L1 share keeps that fraction of its repeats
        keep = fit[np.searchsorted(ub, blk[repeat])]
        l1_hit[repeat] = (np.arange(repeat.size) * 0.6180339887 % 1.0) < keep

    # L2: what L1 did not serve, in time order: by wave, then by issue stamp (the emulator runs its
    # resident blocks in lockstep, lowest PC first, so `seq` orders a wave's accesses in time). The
    # stream is cut into epochs of EPOCH_SHARE of the L2's sectors; per (epoch, sector) the first
    # touch may miss
    l2 = np.flatnonzero(~l1_hit)
    timeline = l2[np.lexsort((seq[l2], wave[l2]))]
    wave = np.zeros(n, np.int64)  # from here on: the access's epoch (L1 hits keep 0)
    wave[timeline] = np.arange(timeline.size) // max(1, int(l2_sectors * EPOCH_SHARE))
    w, s = wave[l2], sec[l2]
    key = w * (1 << 40) + s
    order, first = _first_flags(key, seq[l2])
    firsts = l2[order][first]  # first touch of each (wave, sector)
    fw, fs = wave[firsts], sec[firsts]
    volume = np.bincount(fw, minlength=int(wave.max()) + 1).astype(np.int64)
    cum = np.cumsum(volume)
    o2 = np.lexsort((fw, fs))
    prev_same = np.zeros(o2.size, bool)
    prev_same[1:] = fs[o2][1:] == fs[o2][:-1]
    prev_w = np.full(o2.size, -1, np.int64)
    prev_w[1:] = fw[o2][:-1]
    dist = cum[fw[o2]] - np.where(prev_w >= 0, cum[np.maximum(prev_w, 0)], 0)
    hit_again = prev_same & (dist <= l2_sectors)
    miss = np.zeros(n, bool)
    miss[firsts[o2][~hit_again]] = True
    l2_hit = ~l1_hit & ~miss & ~st
    dram_read = miss & ~st
    # every sector stored is written back once (stores write through L1 and are merged in L2)
    stores = np.flatnonzero(st)
    dram_write = np.zeros(n, bool)
    if stores.size:
        o3, f3 = _first_flags(sec[stores], seq[stores])
        dram_write[stores[o3][f3]] = True
    per_pc = {}
    for name, mask in (("l1_hits", l1_hit), ("l2_hits", l2_hit), ("dram_sectors", dram_read | dram_write),
                       ("accesses", np.ones(n, bool))):
        counts = np.bincount(pc[mask], minlength=int(pc.max()) + 1)
        for p in np.flatnonzero(counts):
            per_pc.setdefault(int(p), {"l1_hits": 0, "l2_hits": 0, "dram_sectors": 0, "accesses": 0})[name] = int(counts[p])
    return CacheResult(per_pc, n, int(l1_hit.sum()), int(l2_hit.sum()), int(dram_read.sum()),
                       int(dram_write.sum()))
