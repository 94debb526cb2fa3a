"""`kata bench` rendering (table, markdown, JSON values, roofline plot) from synthetic results, and
its behaviour on a machine without a GPU."""
import json
import math

import pytest
from click.testing import CliRunner

from grader.performance.bench import markdown_table, roofline_plot, table_rows, to_json
from grader.cli.bench import bench_command
from grader.errors import EnvironmentProblem
from grader.performance.score import Ceilings, score_case, summarize
from harness.backends.gpu import available
from harness.measure.timing import Stats, TimingResult

H200 = Ceilings(bandwidth=4.3e12, fp32=66.9e12, bf16=770e12)


def timing(median):
    return TimingResult(stats=Stats(20, median, median, median * 0.003, median * 0.99, median * 1.002, 7e-4),
                        stop="noise", samples=(median,) * 20, dropped_low_clock=0, sm_clock_mhz=1980.0,
                        sm_clock_max_mhz=1980.0, host_overhead_s=2e-5, issue_s=1e-5, wall_s=0.6)


def row(kata, metric, cost, median, base_median):
    sc = score_case({"n": 1 << 28}, metric, median, cost, H200, baseline_s=base_median)
    case = {"case": {"n": 1 << 28}, "kernel": to_json(timing(median)), "baseline": to_json(timing(base_median)),
            "score": to_json(sc), "recheck": []}
    summary = summarize([sc], metric, {"pass": 0.5, "good": 0.75, "excellent": 0.9})
    return {"kata": kata, "submission": "solution", "metric": metric, "cases": [case], "summary": to_json(summary),
            "error": None}


ROWS = [row("reduce", "roofline", {"bytes": 4 << 28, "flops": 1 << 28}, 2.7e-4, 2.6e-4),
        row("matmul", "library", {"bytes": 3 * 4 * 4096**2, "flops": 2 * 4096**3}, 4.0e-3, 2.7e-3),
        {"kata": "scan", "submission": "solution", "metric": "roofline", "error": "compile error: x"}]


def test_table_and_markdown():
    cells = table_rows(ROWS)
    assert cells[0][0] == "reduce" and cells[0][3] == "0.270 ms" and cells[0][4].endswith("%")
    assert cells[1][4] == "0.68x" and cells[1][5] == "1.00x"
    assert cells[2][6] == "error"
    md = markdown_table(ROWS)
    assert md.startswith("| kata | submission |") and md.count("\n") == 5


def test_json_is_plain():
    doc = json.dumps(to_json({"x": math.inf, "t": (1, 2.5)}))
    assert json.loads(doc) == {"x": None, "t": [1, 2.5]}


def test_roofline_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = roofline_plot(ROWS, {"bandwidth": H200.bandwidth, "fp32": H200.fp32, "bf16": H200.bf16},
                         tmp_path / "roofline.png")
    assert path and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(available(), reason="this machine has a GPU")
def test_bench_without_gpu_is_an_environment_problem():
    result = CliRunner().invoke(bench_command, ["reduce"])
    assert result.exit_code == EnvironmentProblem.exit_code == 3
    assert "need a CUDA GPU" in result.output and "--backend cpu" in result.output
    assert "Traceback" not in result.output


def test_gpu_suite_latency_shows_the_performance_stage_phases():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "lab" / "gpu_suite.py"
    spec = importlib.util.spec_from_file_location("gpu_suite", path)
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    phases = {"prefetch_wait": 0.25, "setup": 0.5, "check": 0.125, "background_data": 1.5}
    doc = {"gpu": "NVIDIA H200", "date": "2026-11-30", "latency": {
        "scan": {"total_s": 9.0, "performance_s": 3.1, "phases": phases, "cases_run": 26, "verdict": "pass",
                 "score": 0.6},
        "bfs": {"error": "boom"}}}
    text = suite._markdown(doc)
    assert "| scan | 9.0 s | 3.1 s | 26 | pass | 0.600 |" in text
    assert ("- scan: prefetch_wait 0.25 s, setup 0.50 s, check 0.12 s (overlapped with the sanitizer: "
            "background_data 1.50 s)") in text
