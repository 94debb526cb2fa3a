"""The pipeline end to end on a numpy fake backend (through the real worker process)."""
import json

import pytest

from fakes import FAKE
from grader.errors import UsageError
from grader import pipeline
from grader.grading import report

ON_THE_FAKE = pipeline.BackendChoice(FAKE, "test backend")


def grade(folder, **kw):
    kw.setdefault("examples", 3)
    return pipeline.grade(None, folder, backend=ON_THE_FAKE, **kw)


def test_a_correct_submission_passes(submission):
    r = grade(submission())
    assert (r.verdict, r.stage) == ("pass", "done")
    assert r.correctness.public == 14 and r.correctness.drawn == 3
    assert r.resources.kernels[0].kernel == "reduce"
    data = json.loads(report.to_json(r))
    assert data["verdict"] == "pass" and data["performance"] is None and data["correctness"]["first_failure"] is None


def test_a_wrong_answer_reports_the_case_mismatches_and_rerun(submission):
    r = grade(submission(modes=("wrong",)))
    f = r.correctness.failure
    assert (r.verdict, r.stage, f.reason) == ("fail", "correctness", "wrong-answer")
    assert f.params == {"n": 255} and r.headline.startswith("fails for n = 255: out[0] = ")
    assert f.rerun.endswith("--case n=255") and f.mismatches[0].output == "out"


def test_unwritten_output_and_modified_input_fail(submission):
    assert grade(submission(modes=("nowrite",))).correctness.failure.params == {"n": 1}
    r = grade(submission(modes=("clobber",)))
    assert "input x was modified" in r.headline


def test_error_findings_fail_even_when_outputs_match(submission):
    r = grade(submission(modes=("oob",)))
    assert r.verdict == "fail" and "out-of-bounds" in r.reasons and "kernel.cu:3" in r.headline
    r = grade(submission(modes=("race",)))
    assert (r.verdict, r.stage, r.reasons) == ("fail", "sanitizer", ("race-raw",))


def test_crash_hang_and_memory_become_findings_not_tracebacks(submission):
    r = grade(submission(modes=("crash",)))
    assert r.verdict == "fail" and r.reasons == ("crash",) and "SIGABRT" in r.headline
    r = grade(submission(modes=("hog",)))
    assert r.verdict == "fail" and r.reasons == ("crash",) and "out of memory" in r.headline
    r = pipeline.grade(None, submission(modes=("hang",)), backend=ON_THE_FAKE, timeout_s=3, examples=0)
    assert r.verdict == "fail" and r.reasons == ("timeout",) and "longer than 3 s" in r.headline


def test_launch_py_exception_names_its_line(submission):
    plan = "def launch(gpu, x, out, n):\n    gpu.memset(out, 0)\n    raise RuntimeError('boom')\n"
    r = grade(submission(launch=plan))
    f = r.correctness.failure
    assert r.reasons == ("launch-error",) and f.problem.kind == "launch-py"
    assert (f.problem.file, f.problem.line) == ("launch.py", 3) and "RuntimeError: boom" in r.headline


def test_launch_py_syntax_error_stops_at_compile(submission):
    r = grade(submission(launch="def launch(gpu, x, out, n)\n    pass\n"))
    assert (r.verdict, r.stage) == ("fail", "compile") and "launch.py:1: syntax error" in r.headline


def test_compile_errors_empty_and_binary_files(submission):
    r = grade(submission(kernel='extern "C" __global__ void reduce(const float* x, float* out, int n)\n{\n  int i = \n}\n'))
    assert (r.verdict, r.stage, r.reasons) == ("fail", "compile", ("compile-error",))
    assert "kernel.cu:4" in r.headline
    folder = submission(kernel="")
    assert "kernel.cu is empty" in grade(folder).headline
    (folder / "kernel.cu").write_bytes(b"\x7fELF\x00\x01\x02")
    assert "not a text file" in grade(folder).headline


def test_a_single_case_and_a_seed(submission):
    r = grade(submission(modes=("wrong",)), case={"n": 500, "dist": "offset"}, seed=5)
    assert r.correctness.cases_run == 1 and r.correctness.failure.origin == "requested"
    assert r.correctness.failure.rerun.endswith("--case n=500 --case dist=offset --seed 5")


def test_hidden_cases_run_on_request(submission):
    r = grade(submission(), hidden=True, examples=0)
    assert r.verdict == "pass" and r.correctness.hidden == 3


def test_missing_kernel_is_a_usage_error(tmp_path):
    (tmp_path / ".kata").write_text('kata = "reduce"\n')
    with pytest.raises(UsageError, match="kernel.cu: not found"):
        pipeline.grade(None, tmp_path, backend=ON_THE_FAKE)


def test_missing_launch_py_uses_the_default_plan(submission):
    folder = submission()
    (folder / "launch.py").unlink()
    r = grade(folder)
    assert r.verdict == "pass" and "default launch plan" in r.notes[0]


def test_terminal_report_shows_verdict_case_and_rerun(submission, capsys):
    from rich.console import Console

    r = grade(submission(modes=("oob",)))
    console = Console(record=True, width=120)
    report.render(r, console)
    text = console.export_text()
    assert text.lstrip().startswith("FAIL") and "rerun: kata grade" in text
    assert "out-of-bounds kernel.cu:3" in text and "atomicAdd" in text  # the source line, quoted


def test_a_wrong_answer_is_rerun_with_the_sanitizer_to_name_its_cause(submission):
    r = grade(submission(modes=("wrong", "race")))
    assert r.correctness.failure.reasons == ("wrong-answer", "race-raw")
    assert r.headline.endswith("the sanitizer found race-raw at kernel.cu:4")
    assert [f.kind for f in r.findings] == ["race-raw"]


SERIAL = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {  // one thread walks all of x: slow on the emulator
        float s = 0.0f;
        for (int i = 0; i < n; ++i) s += x[i];
        atomicAdd(out, s);
    }
}
'''


def test_a_kernel_too_slow_for_the_deadline_gets_a_report_naming_it(tmp_path):
    import shutil

    from grader import catalog
    from grader import pipeline

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "kernel.cu").write_text(SERIAL)
    shutil.copy(catalog.load("reduce").solution_dir / "launch.py", ws / "launch.py")
    r = pipeline.grade("reduce", ws, backend="cpu", deadline_s=4.0)
    assert (r.verdict, r.stage, r.reasons) == ("fail", "correctness", ("timeout",)), r.headline
    assert "the grade's deadline of 4 s passed after" in r.headline and "--case runs one case" in r.headline
    assert (ws / "kernel.cu").read_text() == SERIAL
