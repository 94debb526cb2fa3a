"""Other legal orders for one launch, so a result that depends on the order shows as a mismatch.

By default the emulator runs every resident block in lockstep, blocks in increasing order, and the
lanes of an atomic in lane order (so atomicAdd hands out slots in thread order, and every block's
add lands before any block's later read). A GPU promises none of that. Schedule s > 0 (seeded by
s and the launch's index in the run, so a schedule number reproduces its run exactly) changes what
a kernel may legally observe:

- block order: the blocks start in a shuffled order (odd s) or in reverse (even s);
- residency: at most a half (odd s) or a third (even s) of the grid is resident at once, so the
  early blocks finish before the late ones start;
- atomic arrival order: the lanes of each atomic instruction arrive in a shuffled order (odd s) or
  in reverse (even s), across warps and blocks.

- warp order: a block's warps run in two waves between barriers: the first half of the warps in
  a shuffled order (odd s) or the upper half (even s, the reverse of the default) runs up to the
  next __syncthreads() (or its exit) before the other half starts, so a warp that uses what a
  warp of the other wave writes or adds without a barrier sees it missing. Inside a wave the
  lanes keep the default lockstep (lowest PC first, so a warp still reconverges); a wave that
  spins on a flag the other wave sets lets it run (the engine's spin rotation).
"""
from __future__ import annotations

import numpy as np


class Schedule:
    def __init__(self, seed: int, launch: int) -> None:
        self.seed = int(seed)
        self.rng = np.random.default_rng([self.seed, int(launch)])
        self.shuffle = self.seed % 2 == 1
        self.atomic_lines: set[tuple[str | None, int | None]] = set()  # atomics whose order mattered

    def block_order(self, count: int) -> np.ndarray:
        return self.rng.permutation(count) if self.shuffle else np.arange(count)[::-1].copy()

    def residency(self, resident: int, count: int) -> int:
        waves = 2 if self.shuffle else 3
        return max(1, min(resident, -(-count // waves)))

    def late_warps(self, warps: int) -> np.ndarray | None:
        """Per warp of a block, whether it runs in the second wave (None: one warp, no order)."""
        if warps < 2:
            return None
        order = self.rng.permutation(warps) if self.shuffle else np.arange(warps)[::-1].copy()
        late = np.zeros(warps, bool)
        late[order[(warps + 1) // 2:]] = True
        return late

    def arrival(self, n: int) -> np.ndarray:
        return self.rng.permutation(n) if self.shuffle else np.arange(n)[::-1].copy()

    def note_atomic(self, inst, idx: np.ndarray) -> None:
        """An atomic whose old value a thread uses, with lanes sharing an address: its values
        depend on the arrival order."""
        if idx.size > 1 and (inst.file, inst.line) not in self.atomic_lines and np.unique(idx).size < idx.size:
            self.atomic_lines.add((inst.file, inst.line))
