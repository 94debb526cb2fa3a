"""The GPU parts of a report render and serialise from the performance stage's own types (no GPU
needed: the numbers are made up, the types are the real ones)."""
import json

from rich.console import Console

from grader.grading import report
from grader.performance import score
from grader.performance.measured import CaseTiming, PerformanceResult
from grader.results import CompileStage, CorrectnessStage, GradeReport
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
    # the page of `kata grade --html`: the measurement on the roofline beside the estimate
    from grader.performance import report_html

    points = report_html.page(r)["roofline"]["points"]
    assert [(p.kind, p.label) for _, _, p in points] == [("estimate", "estimate 0.250 ms"),
                                                         ("measured", "measured 0.300 ms")]
    assert points[1][1] > points[0][1]  # slower: drawn lower (SVG y grows downwards)
    assert "measured 0.300 ms" in report_html.render(r)


def test_the_estimate_beside_a_gpu_timing_never_fails_the_grade(monkeypatch):
    import types

    from grader import catalog
    from grader.pipeline import performance

    class DeadWorker:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return None

        def call(self, *a, **k):
            raise RuntimeError("worker gone")

    ended = []
    monkeypatch.setattr(performance, "timed_in_worker", lambda *a, **k: (None, None))
    compiled = type("C", (), {"resources": {}, "ptx": ""})()
    grade = types.SimpleNamespace(kata=catalog.load("reduce"), worker=None, compiled=compiled, filename="kernel.cu",
                                  python_kernel="")
    draft = types.SimpleNamespace(performance=None, estimate="unset", correctness=types.SimpleNamespace(cases_run=3),
                                  end=lambda *a: ended.append(a))
    performance.BesideSanitizer(grade, 0, DeadWorker).start().finish(draft, None)
    assert draft.estimate is None and ended == [("pass", "done", "passed 3 cases", ())]


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


def test_several_libraries_are_each_named_and_the_fastest_is_scored_against(monkeypatch):
    """A reference offering several libraries (qgemv: dequantise + GEMV, torch's int4 kernel): each
    is timed, the fastest is the baseline, one that cannot run here is a note with its reason, and
    the report names every library's time."""
    import sys
    import types

    from grader.performance import measured
    from harness.measure import timing as timing_mod

    medians = {"slow": 2e-3, "fast": 5e-4}
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(
        cuda=types.SimpleNamespace(current_stream=lambda: types.SimpleNamespace(cuda_stream=0))))

    def measure(run, stream, **_):
        s = [medians[run()]] * 10
        return TimingResult(timing_mod.stats(s), "noise", tuple(s), 0, None, None, 0.0, 0.0, 0.01)

    monkeypatch.setattr(timing_mod, "measure", measure)
    ref = types.SimpleNamespace(baseline=lambda torch, inputs, **case: {
        "dequantise + mv": lambda: "slow", "int4 kernel": lambda: "fast", "absent one": "not in this torch"})
    kata = types.SimpleNamespace(reference=ref, bench=types.SimpleNamespace(baseline="libs"))
    bufs = types.SimpleNamespace(torch_inputs=lambda: {}, case={"N": 8})
    best, why, libs, notes = measured._time_baseline(kata, bufs, None, None, None,
                                                     types.SimpleNamespace(external_stream=lambda p: None), {})
    assert best.stats.median == 5e-4 and why is None
    assert libs == (("int4 kernel", 5e-4), ("dequantise + mv", 2e-3))
    assert notes == ("absent one: not timed (not in this torch)",)

    ceilings = score.Ceilings(bandwidth=4.3e12, fp32=66.9e12)
    sc = score.score_case(bufs.case, "roofline", 1e-4, {"bytes": 4e8}, ceilings, baseline_s=best.stats.median)
    perf = PerformanceResult(True, "gpu", "NVIDIA H200", ceilings, None,
                             (CaseTiming(bufs.case, best, best, sc, (), libs),),
                             score.summarize([sc], "roofline", {"pass": 0.5}), ())
    r = GradeReport(kata="qgemv", title="q", workspace=".", backend="gpu", backend_reason="--backend gpu",
                    seed=0, verdict="pass", stage="done", headline="passed", reasons=(),
                    compile=CompileStage(True, (), ""), performance=perf)
    console = Console(record=True, width=200)
    report.render(r, console)
    assert "libraries int4 kernel 0.500 ms, dequantise + mv 2.000 ms" in console.export_text()
    from grader.performance.bench import table_rows, to_json

    row = {"kata": "qgemv", "submission": "solution", "metric": "roofline", **to_json(perf)}
    assert table_rows([row])[0][5].endswith("(int4 kernel)")
