"""The grading GPU for the performance model: public facts of the H200 (SXM) and the few
constants fitted to kata's own timings of the calibration set (fitted.json, with its date and GPU).

Physics first: the SM's pipe rates, clock, caches and counts are harness/hardware.py's (one place
for the H200's facts); HBM3e 4.8 TB/s peak of which a float4 streaming read reaches 4.4 TB/s (`kata calibrate` on the H200, 2026-11-30). The fitted constants are the ones physics
leaves open: loaded latencies, the practical L2 bandwidth, the FMA pipe's sustained fraction
under the power cap, same-address atomic throughput and the launch gap.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from harness.hardware import CLOCK_HZ, H200, L1_BYTES, PIPE_RATE, SECTOR, SUB_PARTITIONS  # noqa: F401

HERE = Path(__file__).resolve().parent

NAME = H200.name
SMS = H200.sm_count
MAX_WARPS_PER_SM = H200.max_threads_per_sm // H200.warp_size
L2_BYTES = H200.l2_bytes


@dataclass(frozen=True)
class Fitted:
    gpu: str
    date: str
    status: str
    c: dict = field(default_factory=dict)  # name -> value (fitted.json "constants")

    def __getitem__(self, name: str) -> float:
        return float(self.c[name])


def fitted(path: Path | None = None) -> Fitted:
    d = json.loads((path or HERE / "fitted.json").read_text())
    return Fitted(d["gpu"], d["date"], d.get("status", ""), dict(d["constants"]))


def library() -> dict:
    """{kata: {"metric", "mode", "cases": [{"case", "library_s", "model_case", "scale_by"}]}}"""
    return json.loads((HERE / "library.json").read_text())


#: ceilings the scores use where library.json has no roofline time (kata calibrate on the H200,
#: 2026-11-30: float4 streaming read 4.44 TB/s, fp32 FMA 65.2 TFLOP/s)
READ_BYTES_PER_S = 4.44e12
FP32_FLOPS = 65.2e12
# An empty kernel under the timing method on the H200 (`kata calibrate`'s empty launch, 3.0 us on
# 2026-12-01, bench/results/2026-12-01-h200-wave3-run2/calibrate.txt): the start-up term of every
# roofline time, added to library.json's roofline_s (recorded without it).
LAUNCH_FLOOR_S = 3.0e-6


def entry(kata) -> dict:
    """library.json's entry for a kata; for one calibrated after it (no entry), a default: the
    first blocks of each launch at the bench shape on zero-filled inputs, roofline times from the
    cost model and the calibrated ceilings, no library time."""
    lib = library()["katas"].get(kata.id)
    if lib is not None and not lib.get("default"):
        return lib
    known = {json.dumps(c["case"], sort_keys=True): c for c in (lib or {}).get("cases", ())}
    cases = []
    for case in kata.bench.cases:
        case = dict(case)
        try:
            cost = kata.reference.cost(**case)
            roof = max(float(cost.get("bytes", 0) or 0) / READ_BYTES_PER_S,
                       float(cost.get("flops", 0) or 0) / FP32_FLOPS)
        except Exception:  # a cost model that needs values only the inputs carry
            roof = 0.0
        rec = known.get(json.dumps(case, sort_keys=True), {})
        cases.append({"case": case, "library_s": rec.get("library_s"), "roofline_s": rec.get("roofline_s") or roof,
                      "model_case": case, **({"bench_scalars": rec["bench_scalars"]} if rec.get("bench_scalars") else {})})
    settings = {k: v for k, v in (lib or {}).items() if k in ("check_halve", "model_halve", "sample_threads")}
    return {"metric": kata.bench.metric, "mode": "sample", "scale_by": "bytes", "cases": cases, "default": True,
            **settings}
