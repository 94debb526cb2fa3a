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

from harness.hardware import (CLOCK_HZ, H200, L1_BYTES, PIPE_RATE, SECTOR, SUB_PARTITIONS,  # noqa: F401
                               TENSOR_PEAK)

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
    """{kata: {"cases": [{"case", "library_s", "solution_s", "roofline_s"}]}}: measured H200 times."""
    return json.loads((HERE / "library.json").read_text())


#: ceilings the scores use where library.json has no roofline time (kata calibrate on the H200,
#: 2026-11-30: float4 streaming read 4.44 TB/s, fp32 FMA 65.2 TFLOP/s)
READ_BYTES_PER_S = 4.44e12
FP32_FLOPS = 65.2e12
#: the tensor cores' sustained share of their dense peak under the H200's power cap: cuBLAS's bf16
#: GEMM sustains 718 of the 989 TFLOP/s (docs/roofline.md, measured 2026-11-30); wgmma work is timed
#: at this rate (estimate.py). The wgmma calibration kernel (lab/model/hopper/rates.py, H200,
#: 2026-12-02) sustains 893 bf16 and 1785 e4m3 TFLOP/s, 90 % of peak, but it moves no operands:
#: GEMMs that stream them draw more power and run slower (cuBLAS 774 and kata's wgmma solution 712
#: TFLOP/s at 4096³ the same day), so the GEMM-derived share stays; at 90 % the model would call
#: the solution's tensor work 20 % faster than the H200 ran it.
TENSOR_SUSTAINED = 718e12 / 989.4e12


def peak_flops(precision: str) -> float:
    """The roofline's P for a kata's bench.precision: the FMA pipe's for fp32, else the dense
    tensor-core peak of that type."""
    return FP32_FLOPS if precision == "fp32" else TENSOR_PEAK[precision]


# An empty kernel under the timing method on the H200 (`kata calibrate`'s empty launch, 3.0 us on
# 2026-12-01, lab/results/2026-12-01-h200-wave3-run2/calibrate.txt): the start-up term of every
# roofline time, added to library.json's roofline_s (recorded without it).
LAUNCH_FLOOR_S = 3.0e-6


def entry(kata) -> dict:
    """The model's view of a kata: its [model] settings (kata.toml) with library.json's measured
    times per bench case; a case without a recorded roofline time gets one from the cost model
    and the calibrated ceilings, and one without a library time is not scored against it."""
    times = library()["katas"].get(kata.id, {})
    known = {json.dumps(c["case"], sort_keys=True): c for c in times.get("cases", ())}
    m = kata.model
    cases = []
    for i, case in enumerate(kata.bench.cases):
        case = dict(case)
        scalars = dict(m.case_scalars[i] if m.case_scalars else m.bench_scalars)
        try:
            cost = kata.reference.cost(**{**case, **scalars})
            roof = max(float(cost.get("bytes", 0) or 0) / READ_BYTES_PER_S,
                       float(cost.get("flops", 0) or 0) / peak_flops(kata.bench.precision))
        except Exception:  # a cost model that needs values only the inputs carry
            roof = 0.0
        rec = known.get(json.dumps(case, sort_keys=True), {})
        shapes = (m.case_shapes[i] if m.case_shapes else m.shapes) or ({},)
        e = {"case": case, "library_s": rec.get("library_s"), "solution_s": rec.get("solution_s"),
             "roofline_s": rec.get("roofline_s") or roof, "model_case": {**case, **shapes[0]},
             "precision": kata.bench.precision}
        if len(shapes) > 1:
            e["model_case2"] = {**case, **shapes[1]}
        if scalars:
            e["bench_scalars"] = scalars
        cases.append(e)
    out = {"metric": kata.bench.metric, "mode": m.mode, "scale_by": m.scale_by, "cases": cases,
           "per_block": m.per_block, "default": not m.declared}
    if m.check_halve:
        out["check_halve"] = list(m.check_halve)
    if m.halve:
        out["model_halve"] = list(m.halve)
    if m.sample_threads:
        out["sample_threads"] = int(m.sample_threads)
    return out
