"""What the counters (counters.py) count: the fields of one row, the Tally that names them, and
the opcode families of the instruction mix."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .ops import family_of

_SPACES = ("global", "shared", "local", "const", "param")
_FIELDS = ("instructions", "active_lanes",
           "global_load_requests", "global_load_sectors", "global_load_ideal_sectors",
           "global_store_requests", "global_store_sectors", "global_store_ideal_sectors",
           "global_atomic_requests", "shared_requests", "shared_wavefronts", "shared_ideal_wavefronts",
           "shared_atomic_requests", "local_requests", "bytes_read", "bytes_written")
_IX = {name: i for i, name in enumerate(_FIELDS)}


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
    """The opcode family for the instruction mix, as its builder declares it (ops.family_of: the
    base opcode, plus the state space for memory operations)."""
    from . import instructions  # noqa: F401  (the builders fill the registry)

    return family_of(opcode)
