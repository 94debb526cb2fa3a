"""The CPU backend's memory-efficiency report (grader/performance/measured.py), from emulator counter tallies."""
from dataclasses import asdict, dataclass, replace

from grader.performance.efficiency import MEMORY_LABEL, memory_report


@dataclass(frozen=True)
class Tally:
    """The fields of harness.emulator.counters.Tally that the report reads (same names)."""

    file: str | None
    line: int | None
    instructions: int
    active_lanes: int
    global_load_requests: int
    global_load_sectors: int
    global_load_ideal_sectors: int
    global_store_requests: int
    global_store_sectors: int
    global_store_ideal_sectors: int
    global_atomic_requests: int
    shared_requests: int
    shared_wavefronts: int
    shared_ideal_wavefronts: int
    shared_atomic_requests: int
    local_requests: int
    bytes_read: int
    bytes_written: int

    def to_dict(self):
        return asdict(self)


ZERO = Tally(**{k: 0 for k in Tally.__dataclass_fields__ if k not in ("file", "line")}, file=None, line=None)


class FakeCounters:
    """What memory_report reads from harness.emulator.counters.Counters: total and per_line."""

    def __init__(self, lines):
        self.per_line = {t.line: t for t in lines}
        fields = [k for k in Tally.__dataclass_fields__ if k not in ("file", "line")]
        self.total = replace(ZERO, **{k: sum(getattr(t, k) for t in lines) for k in fields})


def test_coalesced_reduce_is_efficient_and_labelled():
    n = 1 << 16
    load = replace(ZERO, file="kernel.cu", line=12, instructions=n // 128, active_lanes=n // 4,
                   global_load_requests=n // 128, global_load_sectors=n // 8, global_load_ideal_sectors=n // 8,
                   bytes_read=4 * n)
    r = memory_report([FakeCounters([load])], {"n": n}, {"bytes": 4 * n})
    assert r.label == MEMORY_LABEL and "not a time" in r.label
    assert r.efficiency == 1.0 and r.load_sectors_per_request == r.load_ideal_sectors_per_request == 16.0
    assert r.hotspots == () and r.branch_efficiency == 1.0
    assert "µs" not in "\n".join(r.lines()) and " ms" not in "\n".join(r.lines())


def test_strided_loads_and_bank_conflicts_name_their_lines():
    strided = replace(ZERO, file="kernel.cu", line=7, instructions=100, active_lanes=3200,
                      global_load_requests=100, global_load_sectors=3200, global_load_ideal_sectors=400,
                      bytes_read=12800)
    conflicted = replace(ZERO, file="kernel.cu", line=9, instructions=50, active_lanes=1600,
                         shared_requests=50, shared_wavefronts=1600, shared_ideal_wavefronts=50)
    r = memory_report([FakeCounters([strided]), FakeCounters([conflicted])], {"n": 3200}, {"bytes": 12800})
    assert r.moved_bytes == 3200 * 32 and r.efficiency == 12800 / (3200 * 32)
    assert r.bank_conflict_degree == 32.0
    assert r.hotspots[0].startswith("kernel.cu:7: 32.0 sectors per load request, ideal 4.0")
    assert r.hotspots[1].startswith("kernel.cu:9: 32.0 shared wavefronts per request")
