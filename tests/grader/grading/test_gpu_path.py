"""The GPU path of a grade without a GPU: the numpy fake plays the GPU (its answers are right
whatever kernel.cu says), and the sanitizer runs on kata's real CPU emulator, as on a GPU machine."""
import json
import shutil

import pytest
from rich.console import Console

from fakes import FAKE
from grader import catalog
from grader import pipeline
from grader.pipeline import performance, sanitizer
from grader.grading import report

REDUCE = catalog.load("reduce")
#: the numpy fake plays the GPU: the grade takes the GPU path
PLAYS_THE_GPU = pipeline.BackendChoice(FAKE, "test backend", acts_as="gpu")


@pytest.fixture
def on_gpu(monkeypatch):
    monkeypatch.setattr(performance, "timed_in_worker", lambda *a, **k: (None, None))  # the fake cannot time


def workspace(tmp_path, kernel):
    """A folder with `kernel` (a path, or the name of one of reduce's wrong kernels) as kernel.cu."""
    ws = tmp_path / "ws"
    ws.mkdir()
    if isinstance(kernel, str):
        from grader.catalog import wrong

        mistake = {m.name: m for m in wrong.mistakes("reduce", REDUCE.solution_dir)}[kernel]
        (ws / "kernel.cu").write_text(wrong.kernel_source(mistake))
    else:
        shutil.copy(kernel, ws / "kernel.cu")
    shutil.copy(REDUCE.solution_dir / "launch.py", ws / "launch.py")
    return ws


def grade(ws):
    return pipeline.grade("reduce", ws, backend=PLAYS_THE_GPU, examples=2)


def text_of(r):
    console = Console(record=True, width=200)
    report.render(r, console)
    return console.export_text()


def test_a_race_the_gpu_hides_fails_on_the_emulators_sanitizer(tmp_path, on_gpu):
    r = grade(workspace(tmp_path, "missing_syncthreads"))
    assert (r.verdict, r.stage) == ("fail", "sanitizer") and "race-raw" in r.reasons, r.headline
    assert r.headline.startswith("outputs match on the GPU, but the sanitizer (CPU emulator) found race-raw at kernel.cu:")
    assert r.memory.label == "sanitizer (CPU emulator)" and r.memory.report is None  # no emulator counters
    assert "findings (sanitizer (CPU emulator), case n = " in text_of(r)
    data = json.loads(report.to_json(r))
    assert data["sanitizer"]["ran_on"] == "cpu emulator" and data["counters"] is None


def test_a_clean_kernel_passes_and_says_where_the_sanitizer_ran(tmp_path, on_gpu):
    r = grade(workspace(tmp_path, REDUCE.solution_dir / "kernel.cu"))
    assert (r.verdict, r.stage) == ("pass", "done"), r.headline
    assert r.memory.case is not None and r.memory.findings == ()
    assert "sanitizer (CPU emulator): no findings on case n = " in text_of(r)


def test_a_wrong_answer_on_the_gpu_is_diagnosed_on_the_emulator(tmp_path, on_gpu):
    # The fake "GPU" adds into out without zeroing it: NaN + sum. The emulator's initcheck names
    # the cause: the atomicAdd reads the poisoned output nothing has written.
    ws = workspace(tmp_path, "uninitialized_output")
    shutil.copy(REDUCE.solution_dir / "wrong" / "uninitialized_output.launch.py", ws / "launch.py")
    r = grade(ws)
    assert (r.verdict, r.stage, r.reasons) == ("fail", "correctness", ("wrong-answer", "uninitialized-read")), \
        r.headline
    assert "sanitizer (CPU emulator) found uninitialized-read at kernel.cu:" in r.headline


def test_a_wrong_answer_on_the_gpu_gets_its_cause_from_the_emulator(tmp_path, on_gpu):
    ws = workspace(tmp_path, "missing_syncthreads")
    with open(ws / "kernel.cu", "a") as f:
        f.write('extern "C" __global__ void mode_wrong() {}\n')  # the fake GPU drops an element
    r = grade(ws)
    assert (r.verdict, r.stage) == ("fail", "correctness") and r.reasons[:2] == ("wrong-answer", "race-raw")
    assert "; sanitizer (CPU emulator) found race-raw at kernel.cu:" in r.headline


# A one-warp path for tiny inputs, only taken by the public cases n = 1, 31, 32, 33 (the sanitizer's
# case is the largest that passed, thousands of elements): what the engine finds there shows only
# if the GPU path screens every public case on the emulator.
_SMALL = '''{
    if (n <= 32) {  // one warp covers a tiny input
        const int lane = threadIdx.x;
        if (blockIdx.x > 0 || lane >= 32) return;
        %s
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0) atomicAdd(out, v);
        return;
    }
    float sum = 0.0f;'''
SMALL_PATHS = {
    "correct": "float v = lane < n ? x[lane] : 0.0f;",
    "deadlock": "if (lane >= n) return;  // BUG: the full-mask shuffle below names exited lanes\n        float v = x[lane];",
    "out-of-bounds": "float v = lane <= n ? x[lane] : 0.0f;  // BUG: reads x[n]",
    # a sanitizer (observer) finding, not an engine one: another lane's word with no __syncwarp()
    "race-raw": "__shared__ float tiny[32];\n        tiny[lane] = lane < n ? x[lane] : 0.0f;\n"
                "        float v = tiny[31 - lane];  // BUG: no __syncwarp() between the write and this read",
}


def small_path_workspace(tmp_path, kind):
    source = (REDUCE.solution_dir / "kernel.cu").read_text()
    head = "{\n    float sum = 0.0f;"
    assert source.count(head) == 1
    ws = workspace(tmp_path, REDUCE.solution_dir / "kernel.cu")
    (ws / "kernel.cu").write_text(source.replace(head, _SMALL % SMALL_PATHS[kind]))
    # Where the finding belongs: the shuffle that waits for exited lanes, or the read of x[n].
    mark = {"deadlock": "__shfl_down_sync(0xffffffffu, v,", "out-of-bounds": "BUG", "race-raw": "BUG"}.get(kind)
    lines = (ws / "kernel.cu").read_text().splitlines()
    return ws, next((i for i, text in enumerate(lines, 1) if mark and mark in text), None)


@pytest.mark.parametrize("kind", ["deadlock", "out-of-bounds", "race-raw"])
def test_an_engine_finding_on_a_public_case_the_sanitizer_skips_fails_the_gpu_path(tmp_path, on_gpu, kind):
    ws, line = small_path_workspace(tmp_path, kind)
    r = grade(ws)
    assert (r.verdict, r.stage) == ("fail", "sanitizer") and kind in r.reasons, r.headline
    assert r.headline.startswith(f"outputs match on the GPU, but the sanitizer (CPU emulator) found {kind} "
                                 f"at kernel.cu:{line} for n = {r.memory.case['n']}:")
    assert r.memory.case["n"] <= 32 and r.memory.label == "sanitizer (CPU emulator)"
    assert f"findings (sanitizer (CPU emulator), case n = {r.memory.case['n']}" in text_of(r)


def test_a_race_on_a_small_public_case_fails_the_cpu_grade_too(tmp_path):
    # The largest case (the one the sanitizer stage picks) never takes the one-warp path.
    ws, line = small_path_workspace(tmp_path, "race-raw")
    r = pipeline.grade("reduce", ws, backend="cpu", examples=2)
    assert (r.verdict, r.stage) == ("fail", "sanitizer") and r.reasons == ("race-raw",), r.headline
    import re

    # tiny[31] is 124 bytes into the array; where the compiler puts the array (after reduce's own
    # 128-byte buffer with NVRTC, first with clang) moves the offset by a multiple of 128
    m = re.match(rf"outputs match, but race-raw at kernel.cu:{line} for n = {r.memory.case['n']}: "
                 r"thread \(0,0,0\) of block \(0,0,0\) reads shared memory at byte offset (\d+) "
                 rf"\(kernel.cu:{line}\), which thread \(31,0,0\) wrote at kernel.cu:{line - 1} "
                 r"with no __syncwarp\(\)", r.headline)
    assert m and int(m[1]) % 128 == 124, r.headline
    assert r.memory.case["n"] <= 32


def test_the_correct_twin_of_the_small_path_passes_the_gpu_path(tmp_path, on_gpu):
    ws, _ = small_path_workspace(tmp_path, "correct")
    r = grade(ws)
    assert (r.verdict, r.stage) == ("pass", "done"), r.headline
    assert r.memory.case["n"] > 32 and r.memory.screened >= 12  # every other public case, n = 1 included
    assert "more public cases (sanitizer on)" in text_of(r)
    assert json.loads(report.to_json(r))["sanitizer"]["public_cases_screened"] == r.memory.screened


def test_the_gpu_worker_prefetches_once_correctness_passed_before_the_sanitizer(tmp_path, on_gpu, monkeypatch):
    order = []
    monkeypatch.setattr(performance, "start_prefetch", lambda worker, kid, seed: order.append(
        ("prefetch", worker.program.backend, kid, seed)))
    real = sanitizer.sanitizer_stage
    monkeypatch.setattr(sanitizer, "sanitizer_stage", lambda *a, **k: order.append(("sanitizer",)) or real(*a, **k))
    r = grade(workspace(tmp_path, REDUCE.solution_dir / "kernel.cu"))
    assert r.verdict == "pass" and order == [("prefetch", FAKE, "reduce", r.seed), ("sanitizer",)]
    order.clear()
    (tmp_path / "wrong").mkdir()
    ws = workspace(tmp_path / "wrong", REDUCE.solution_dir / "kernel.cu")
    with open(ws / "kernel.cu", "a") as f:
        f.write('extern "C" __global__ void mode_wrong() {}\n')
    r = grade(ws)
    assert r.stage == "correctness" and order == []  # failed: nothing to prefetch for


def test_a_prefetch_that_finds_no_gpu_changes_nothing(tmp_path, on_gpu):
    # the real _prefetch: the fake GPU worker runs grader.performance.measured.prefetch, which finds no CuPy
    r = grade(workspace(tmp_path, REDUCE.solution_dir / "kernel.cu"))
    assert (r.verdict, r.stage) == ("pass", "done"), r.headline


# -- the performance stage beside the sanitizer (grader/pipeline/performance.py BesideSanitizer) ------

def _alive(pid: int) -> bool:
    from pathlib import Path

    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_sanitizer_failure_beside_a_running_timing_decides_and_stops_the_timing(tmp_path, monkeypatch):
    """The GPU timing starts with the sanitizer; when the sanitizer finds an error the grade fails on
    it at once: the timing's worker is stopped mid-run (not waited for), nothing it measured shows,
    and no worker process is left behind."""
    import multiprocessing
    import time

    pid_file, calls = tmp_path / "timing.pid", []

    def timing(worker, *a, **k):
        calls.append(time.monotonic())
        value, problem = worker.call("fakes:long_timing", 600, seconds=300, pid_file=str(pid_file))
        calls.append(problem)
        return (None, problem) if problem is not None else ("a measurement", None)

    monkeypatch.setattr(performance, "timed_in_worker", timing)
    ends = []
    real = sanitizer.sanitizer_stage
    monkeypatch.setattr(sanitizer, "sanitizer_stage", lambda *a, **k: (real(*a, **k), ends.append(time.monotonic()))[0])
    # children of earlier tests in this process (a dialect backend keeps its kernel.py process) are not this grade's
    before = set(multiprocessing.active_children())
    t0 = time.monotonic()
    r = grade(workspace(tmp_path, "missing_syncthreads"))
    assert (r.verdict, r.stage) == ("fail", "sanitizer") and "race-raw" in r.reasons, r.headline
    assert r.performance is None and r.headline.startswith("outputs match on the GPU, but the sanitizer")
    assert calls[0] < ends[0]  # the timing was running while the sanitizer ran
    assert calls[1] is not None and time.monotonic() - t0 < 200  # stopped, not waited for
    assert not _alive(int(pid_file.read_text()))
    # the GPU worker, the model's, the emulator's: all gone
    assert set(multiprocessing.active_children()) - before == set()


def test_a_timing_problem_never_outranks_the_sanitizers_finding(tmp_path, monkeypatch):
    # the timing fails first (a crash at the bench size), the sanitizer later: the sanitizer decides
    from harness.sandbox.protocol import Problem

    monkeypatch.setattr(performance, "timed_in_worker", lambda *a, **k: (None, Problem("crash", "illegal address")))
    r = grade(workspace(tmp_path, "missing_syncthreads"))
    assert (r.verdict, r.stage) == ("fail", "sanitizer") and "race-raw" in r.reasons, r.headline


def test_a_clean_sanitizer_lets_the_timing_decide_and_the_model_runs_on_its_own_worker(tmp_path, monkeypatch):
    from harness.sandbox.protocol import Problem

    seen = []
    monkeypatch.setattr(performance, "timed_in_worker", lambda *a, **k: (None, Problem("crash", "illegal address")))
    from grader.performance.model import stage as model_stage

    real = model_stage.estimate_stage
    monkeypatch.setattr(model_stage, "estimate_stage", lambda kata, worker, *a: seen.append(worker) or real(kata, worker, *a))
    emulators = []
    real_sanitizer = sanitizer.sanitizer_stage
    monkeypatch.setattr(sanitizer, "sanitizer_stage", lambda kata, emulator, *a, **k: emulators.append(emulator)
                        or real_sanitizer(kata, emulator, *a, **k))
    r = grade(workspace(tmp_path, REDUCE.solution_dir / "kernel.cu"))
    assert (r.verdict, r.stage) == ("fail", "performance") and r.headline == "performance stage: illegal address"
    assert len(seen) == 1 and seen[0].program.backend == "cpu" and seen[0] is not emulators[0]


def test_torch_is_imported_beside_the_cases_only_for_a_kata_with_a_baseline_where_torch_is_installed(
        monkeypatch, tmp_path):
    import importlib.util
    import types

    from grader.performance import baseline_cache

    monkeypatch.setenv("KATA_HOME", str(tmp_path))
    sent = []

    class GpuWorker:
        def start(self):
            return None

        def prefetch(self, target, **kwargs):
            sent.append((target.__name__, kwargs))
            return True

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object() if name == "torch" else None)
    assert performance.import_beside_cases(GpuWorker(), REDUCE, 0)
    assert sent == [("import_torch_beside", {"beside_runs": True, "kata_id": "reduce"})]
    no_baseline = types.SimpleNamespace(id="x", reference=types.SimpleNamespace())
    assert not performance.import_beside_cases(GpuWorker(), no_baseline, 0) and len(sent) == 1
    # the library's time at every bench case already in this machine's cache: no torch needed
    monkeypatch.setattr(baseline_cache, "all_cached", lambda kata, seeds, policy: True)
    assert not performance.import_beside_cases(GpuWorker(), REDUCE, 0) and len(sent) == 1
    monkeypatch.undo()
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert not performance.import_beside_cases(GpuWorker(), REDUCE, 0) and len(sent) == 1


def test_the_model_starts_beside_the_cases_and_its_estimate_reaches_a_passing_grade(tmp_path, on_gpu, monkeypatch):
    from grader.pipeline import run as run_mod

    calls = []
    real_start, real_cases = performance.BesideSanitizer.start_model, run_mod.correctness_stage
    monkeypatch.setattr(performance.BesideSanitizer, "start_model", lambda self: calls.append("model") or real_start(self))
    monkeypatch.setattr(run_mod, "correctness_stage", lambda *a, **k: calls.append("cases") or real_cases(*a, **k))
    r = grade(workspace(tmp_path, REDUCE.solution_dir / "kernel.cu"))
    assert (r.verdict, r.stage) == ("pass", "done"), r.headline
    assert calls[:2] == ["model", "cases"] and r.estimate is not None


def test_a_grade_that_fails_its_cases_stops_the_model_started_beside_them(tmp_path, on_gpu, monkeypatch):
    import multiprocessing
    import types

    from grader.pipeline import run as run_mod

    def failing(draft, run, **k):
        draft.end("fail", "correctness", "wrong answer at n = 3", ("wrong-answer",))
        return types.SimpleNamespace(passed=())

    monkeypatch.setattr(run_mod, "correctness_stage", failing)
    before = set(multiprocessing.active_children())
    r = grade(workspace(tmp_path, REDUCE.solution_dir / "kernel.cu"))
    assert (r.verdict, r.stage, r.headline) == ("fail", "correctness", "wrong answer at n = 3")
    assert r.estimate is None and r.performance is None
    assert set(multiprocessing.active_children()) - before == set()  # the model's worker is gone too
