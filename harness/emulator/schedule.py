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

Warps inside a block still run in lockstep by program counter (barrier and shuffle semantics need
no change), so an order between warps of one block is left to the sanitizer's race checks.
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

    def arrival(self, n: int) -> np.ndarray:
        return self.rng.permutation(n) if self.shuffle else np.arange(n)[::-1].copy()

    def note_atomic(self, inst, idx: np.ndarray) -> None:
        """An atomic whose old value a thread uses, with lanes sharing an address: its values
        depend on the arrival order."""
        if idx.size > 1 and (inst.file, inst.line) not in self.atomic_lines and np.unique(idx).size < idx.size:
            self.atomic_lines.add((inst.file, inst.line))
