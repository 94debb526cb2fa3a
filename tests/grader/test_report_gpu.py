"""The GPU parts of a report render and serialise from the performance stage's own types (no GPU
needed: the numbers are made up, the types are the real ones)."""
import json

from rich.console import Console

from grader.grading import report
from grader.performance import score
from grader.performance.measured import CaseTiming, PerformanceResult
from grader.grading.stages import CompileStage, CorrectnessStage, GradeReport
from harness.measure.timing import Stats, TimingResult


def test_performance_section_shows_median_bandwidth_and_score():
    ceilings = score.Ceilings(bandwidth=4.3e12, fp32=66.9e12)
    case = {"n": 268435456}
    sc = score.score_case(case, "roofline", 0.3e-3, {"bytes": 4 * 268435456, "flops": 268435456}, ceilings,
                          baseline_s=0.26e-3)
    timing = TimingResult(Stats(20, 0.3e-3, 0.3e-3, 1e-6, 0.29e-3, 0.31e-3, 0.001), "noise",
                          (0.3e-3,) * 20, 0, None, None, 0.0, 0.0, 0.5)
    summary = score.summarize([sc], "roofline", {"pass": 0.5, "good": 0.75, "excellent": 0.9})
    phases = {"prefetch_wait": 0.4, "setup": 0.3, "upload": 0.1, "check": 0.2, "kernel_timing": 0.35,
              "recheck": 0.01, "baseline_timing": 0.35, "background_data": 0.05}
    perf = PerformanceResult(True, "gpu", "NVIDIA H200", ceilings, None,
                             (CaseTiming(case, timing, timing, sc, ()),), summary, (), phases=phases)
    r = GradeReport(kata="reduce", title="Sum reduction", workspace=".", backend="gpu",
                    backend_reason="--backend gpu", seed=0, verdict="pass", stage="done",
                    headline="passed 26 cases", reasons=(), compile=CompileStage(True, (), ""),
                    correctness=CorrectnessStage(True, 26, 14, 12, 0, 0, 12, None), performance=perf)
    console = Console(record=True, width=160)
    report.render(r, console)
    text = console.export_text()
    assert "n = 268435456: median 0.300 ms" in text and "GB/s" in text
    assert r.score == summary.value
    data = json.loads(report.to_json(r))
    assert data["performance"]["summary"]["tier"] == summary.tier and data["counters"] is None
    assert data["performance"]["phases"] == phases  # where the stage's time went, for latency work


def test_a_gpu_report_sets_the_measurement_beside_the_estimate_and_notes_a_far_one():
    from dataclasses import replace

    from grader.performance.model import LABEL, CaseEstimate, Estimate

    ceilings = score.Ceilings(bandwidth=4.3e12, fp32=66.9e12)
    case = {"n": 268435456}
    sc = score.score_case(case, "roofline", 0.3e-3, {"bytes": 4 * 268435456}, ceilings)
    timing = TimingResult(Stats(20, 0.3e-3, 0.3e-3, 1e-6, 0.29e-3, 0.31e-3, 0.001), "noise",
                          (0.3e-3,) * 20, 0, None, None, 0.0, 0.0, 0.5)
    summary = score.summarize([sc], "roofline", {"pass": 0.5})
    perf = PerformanceResult(True, "gpu", "NVIDIA H200", ceilings, None, (CaseTiming(case, timing, None, sc, ()),),
                             summary, ())
    ce = CaseEstimate(case, 0.25e-3, "emulated 4 blocks", "DRAM 98% busy", "dram", {"dram": 0.98}, 0.95, 0.255e-3,
                      (("kernel.cu:16", 1.0, "ld"),), "at the memory ceiling", 1, 1.07e9, 1.07e9, ())
    est = Estimate(LABEL, "NVIDIA H200", "physics defaults", "roofline", 0.95, 0.93, "excellent", (ce,))
    r = GradeReport(kata="reduce", title="Sum reduction", workspace=".", backend="gpu", backend_reason="--backend gpu",
                    seed=0, verdict="pass", stage="done", headline="passed", reasons=(),
                    compile=CompileStage(True, (), ""), performance=perf, estimate=est)

    def text(rep):
        console = Console(record=True, width=200)
        report.render(rep, console)
        return console.export_text()

    out = text(r)
    assert "bound: DRAM 98% busy" in out and "measured 0.300 ms = 1.20x the estimate" in out and "far from" not in out
    far = replace(r, estimate=replace(est, cases=(replace(ce, seconds=0.05e-3),)))
    assert "= 6.00x the estimate  (far from the estimate" in text(far)
    assert json.loads(report.to_json(r))["estimate"]["cases"][0]["bound"] == "DRAM 98% busy"


def test_the_estimate_beside_a_gpu_timing_never_fails_the_grade():
    from grader.performance.model import stage

    class DeadWorker:
        def call(self, *a, **k):
            raise RuntimeError("worker gone")

    from grader import catalog

    compiled = type("C", (), {"resources": {}, "ptx": ""})()
    with stage.beside_measurement(catalog.load("reduce"), DeadWorker(), compiled, "kernel.cu", 0) as model:
        pass
    assert model.result() is None


def test_a_model_run_that_fails_leaves_the_cpu_grade_with_a_note():
    from grader import catalog
    from grader.performance.model import stage
    from harness.sandbox.isolation import Problem

    class Failing:
        def call(self, *a, **k):
            return None, Problem("internal", "the sampled run raised")

    compiled = type("C", (), {"resources": {}, "ptx": ""})()
    est, occupancy, note = stage.estimate_stage(catalog.load("reduce"), Failing(), compiled, "kernel.cu", 0)
    assert est is None and occupancy == ()
    assert note == "no performance estimate: the model run at the bench shape failed (the sampled run raised)"
