"""What the emulator tells the learner: one Finding per problem, with its place in the source."""
from __future__ import annotations

from dataclasses import dataclass

# Every kind the emulator reports. The grader, the reports and the wrong-kernel tests use these names.
KINDS = {
    "out-of-bounds": "error",  # a global, shared or local access outside any allocation
    "misaligned": "error",  # an access whose address is not a multiple of its size
    "race-raw": "error",  # a read of a value another thread wrote with nothing ordering them (shared, global)
    "race-war": "error",  # shared write over a value another thread read with no barrier between
    "race-waw": "error",  # two threads wrote the same word with nothing ordering them (shared, global)
    "uninitialized-read": "error",  # shared memory nobody in the block wrote, or an output not yet written
    "large-shared": "warning",  # > 48 KB of dynamic shared memory: CUDA needs the opt-in attribute
    "divergent-barrier": "error",  # __syncthreads reached by part of a block only
    # a warp shuffle read a lane past the end of a partial warp: garbage (poison here), which a
    # reduction whose lane 0 never depends on it may ignore; a result that does turns into NaN
    "shuffle-missing-lane": "warning",
    # a barrier completed because exited threads count as arrived: it sits in control flow part of
    # the block skipped (invalid CUDA, whatever a GPU does with it)
    "barrier-after-exit": "error",
    "deadlock": "error",  # no thread can make progress (barrier or warp-sync never satisfied)
    "watchdog": "error",  # instruction budget or wall clock exhausted: probably a hang
    "trap": "error",  # the kernel executed trap (__trap() or a failed assert()); the launch aborted
    "cp-async-unwaited": "error",  # a shared read of bytes a cp.async still copies (no wait before it)
    "uninitialized-fragment": "error",  # an mma/wmma operand register no instruction ever wrote
    # the answer changed when the emulator ran the blocks, warps or atomics in another legal order
    "order-dependent": "error",
    # Hopper (hopper_check.py, ops_mbarrier.py): TMA / mbarrier / wgmma / cluster mistakes
    "bulk-copy-unwaited": "error",  # a shared read of a TMA/bulk copy's bytes before waiting for its mbarrier phase
    "bulk-copy-overwrite": "error",  # a copy refilled a buffer a thread still reads (no 'empty' barrier)
    "mbarrier-uninitialized": "error",  # an mbarrier operation on shared memory no mbarrier.init set up
    "mbarrier-never-completes": "error",  # a wait on a phase owed more transaction bytes than any copy brings
    "mbarrier-tx-mismatch": "error",  # copies brought more bytes than expect_tx announced
    "mbarrier-over-arrive": "error",  # an arrival on a phase whose arrivals were all in (reused too early)
    "wgmma-operand-changed": "error",  # shared memory a wgmma reads was written before its wait_group
    "wgmma-missing-fence": "error",  # wgmma.mma_async without a wgmma.fence before it
    "dsmem-unsynchronized": "error",  # another block's shared memory read without a cluster barrier
}


# Findings that are causes rank before those that are usually their symptoms: a copy not waited
# for before the read of its bytes, then reads of unwritten memory and races (whose garbage becomes
# addresses, branch conditions and trip counts), then barriers, then the accesses and hangs such
# garbage produces.
_CAUSE_RANK = {"cp-async-unwaited": 0, "uninitialized-fragment": 1, "uninitialized-read": 1, "race-raw": 1,
               "race-war": 1, "race-waw": 1, "order-dependent": 1, "divergent-barrier": 2,
               "barrier-after-exit": 2, "shuffle-missing-lane": 2}
SYMPTOMS = ("out-of-bounds", "misaligned", "divergent-barrier", "barrier-after-exit", "deadlock", "watchdog")


def cause_rank(kind: str) -> int:
    """0 for the likeliest causes, 3 for symptoms (out-of-bounds, hangs) and the rest."""
    return _CAUSE_RANK.get(kind, 3)


@dataclass(frozen=True)
class Finding:
    kind: str  # one of KINDS
    message: str  # one sentence a learner understands
    file: str | None = None  # the learner's file, from .loc/.file
    line: int | None = None  # 1-based line in that file
    block: tuple[int, int, int] | None = None  # blockIdx of the first offending thread
    thread: tuple[int, int, int] | None = None  # threadIdx of the first offending thread
    address: int | None = None  # byte address (global) or offset in the block's shared memory
    space: str | None = None  # "global" | "shared" | "local" | None
    count: int = 1  # how many times this (kind, line) happened; only the first is described
    detail: str = ""  # extra lines, e.g. the per-warp report of a deadlock
    other_thread: tuple[int, int, int] | None = None  # for races: the thread on the other side
    other_line: int | None = None  # for races: the line of the other access
    other_block: tuple[int, int, int] | None = None  # for global races: the other thread's block

    @property
    def severity(self) -> str:
        return KINDS.get(self.kind, "error")

    def where(self) -> str:
        return f"{self.file or '?'}:{self.line if self.line is not None else '?'}"


class EmulatorError(Exception):
    """A problem the emulator cannot turn into a finding (bad PTX, bad launch arguments)."""


class UnsupportedPTX(EmulatorError):
    """An instruction the emulator does not implement; never a silent wrong answer."""

    def __init__(self, opcode: str, file: str | None, line: int | None):
        self.opcode, self.file, self.line = opcode, file, line
        where = f" at {file}:{line}" if line is not None else ""
        super().__init__(f"unsupported PTX instruction {opcode}{where}")
