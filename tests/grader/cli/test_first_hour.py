"""Issue 28, a newcomer's first hour: each complaint as the user met it (exact output, exit code)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import catalog
from grader.cli import cli
from grader.terminal import StatusLine, Terminal

ROOT = Path(__file__).resolve().parents[3]


def _workspace(kata, tmp_path, kata_id="vector-add", source=None):
    r = kata("start", kata_id)
    assert r.exit_code == 0, r.output
    ws = tmp_path / kata_id
    if source is not None:
        (ws / "kernel.cu").write_text(source)
    return ws


# -- text is text ------------------------------------------------------------------------------

def test_a_compile_error_quotes_the_learners_brackets(kata, tmp_path):
    ws = _workspace(kata, tmp_path, source=(
        'extern "C" __global__ void vector_add(const float* x, const float* y, float* out, int n)\n'
        "{\n    int i = threadIdx.x;\n    out[0] = x[i] + undefined_thing[i];\n}\n"))
    r = kata("grade", str(ws), "--backend", "cpu")
    assert r.exit_code == 1
    assert "out[0] = x[i] + undefined_thing[i];" in r.output  # was `out[0] = x + undefined_thing;`


def test_control_characters_in_learner_text_never_reach_the_terminal(kata, tmp_path):
    ws = _workspace(kata, tmp_path, source="\x1b[2J\x07 extern \"C\" __global__ void vector_add(\x1b[31m\n")
    r = kata("grade", str(ws), "--backend", "cpu")
    assert r.exit_code == 1 and "\x1b" not in r.output and "\x07" not in r.output
    assert "[2J" in r.output  # the text stays, its escape character does not


def test_kata_list_piped_shows_every_kata_on_one_line_with_its_languages(kata):
    r = kata("list")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    for k in catalog.all_katas():
        (row,) = [line for line in lines if line.startswith(k.id + " ")]
        assert f"{k.title}: {k.summary}" in row  # not wrapped at 80 columns
    assert any("[in CUDA C, triton" in line for line in lines)  # was eaten as markup
    assert len(lines) == len(catalog.all_katas()) + 2


def test_kata_status_piped_keeps_the_workspace_column(kata, tmp_path):
    _workspace(kata, tmp_path, "attention-backward")
    r = kata("status")
    (row,) = [line for line in r.output.splitlines() if line.startswith("attention-backward ")]
    assert row.rstrip().endswith("attention-backward") and "started" in row


def test_a_reader_that_stops_early_leaves_a_passing_grade_at_exit_0(tmp_path):
    env = dict(os.environ, KATA_HOME=str(tmp_path / "home"), PYTHONPATH=str(ROOT))
    cmd = (f"set -o pipefail; {sys.executable} -m grader grade solutions/vector-add --kata vector-add "
           "--backend cpu | head -1")
    r = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(" PASS ") and "Traceback" not in r.stderr and "Broken pipe" not in r.stderr


# -- the store and the file system ---------------------------------------------------------------

@pytest.fixture
def unwritable_home(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where KATA_HOME's parent should be")
    monkeypatch.setenv("KATA_HOME", str(blocker / "home"))
    return blocker / "home"


@pytest.mark.parametrize("args", [("start", "reduce"), ("hint", "--kata", "reduce"), ("status",),
                                  ("solution", "reduce"), ("reset", "reduce", "-y"), ("mistakes", "reduce"),
                                  ("interview", "start", "--katas", "reduce")])
def test_every_command_says_exit_3_for_an_unwritable_home_before_changing_anything(unwritable_home, tmp_path, args):
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output and "internal error" not in r.output
    assert str(unwritable_home.parent) in r.output and "KATA_HOME" in r.output
    assert not (tmp_path / "reduce").exists()  # start made no workspace


def test_two_resets_in_one_second_keep_both_backups(tmp_path):
    from grader.grading.workspace import restore_stub

    kata = catalog.load("reduce")
    ws = tmp_path / "ws"
    ws.mkdir()
    backups = []
    for text in ("// first\n", "// second\n"):
        (ws / "kernel.cu").write_text(text)
        backups.append(restore_stub(ws, kata))
    assert backups[0] != backups[1]
    assert [(b / "kernel.cu").read_text() for b in backups] == ["// first\n", "// second\n"]


def test_reset_without_a_terminal_names_the_yes_flag(kata, tmp_path):
    ws = _workspace(kata, tmp_path, "reduce", source="// mine\n")
    r = CliRunner().invoke(cli, ["reset", "reduce"], input="")  # `< /dev/null`
    assert r.exit_code == 2 and "pass -y" in r.output and "Aborted" not in r.output
    assert (ws / "kernel.cu").read_text() == "// mine\n"  # nothing changed


def test_interview_submit_without_a_terminal_names_the_yes_flag(tmp_path, fake_backend, monkeypatch):
    from grader.cli import interview

    monkeypatch.setattr(interview, "require_sandbox", lambda: None)
    runner = CliRunner()
    started = runner.invoke(cli, ["interview", "start", "--katas", "vector-add", "--minutes", "30"])
    assert started.exit_code == 0, started.output
    r = runner.invoke(cli, ["interview", "submit"], input="")
    assert r.exit_code == 2 and "pass -y" in r.output and "Aborted" not in r.output


# -- wrong advice and numbers --------------------------------------------------------------------

def test_an_empty_kernel_is_told_to_restart_this_folder_not_a_nested_one(kata, tmp_path, monkeypatch):
    ws = _workspace(kata, tmp_path, source="")
    monkeypatch.chdir(ws)
    r = kata("grade", "--backend", "cpu")
    assert r.exit_code == 1 and "kata start vector-add . --force" in r.output
    again = kata("start", "vector-add", ".", "--force")
    assert again.exit_code == 0 and not (ws / "vector-add").exists()


def test_nvrtc_undefined_infinity_says_what_to_write():
    from harness.frontends import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    res = nvrtc.compile('extern "C" __global__ void k(float* o) { o[0] = INFINITY; }', "kernel.cu", use_cache=False)
    (err,) = [d for d in res.diagnostics if d.severity == "error"]
    assert "CUDART_INF_F" in err.message and "<cuda/std/limits>" in err.message


def test_the_suggested_cuda_std_infinity_compiles_under_nvrtc():
    from harness.frontends import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    res = nvrtc.compile('#include <cuda/std/limits>\n#include <math_constants.h>\nextern "C" __global__ void k(float* o)'
                        " { o[0] = cuda::std::numeric_limits<float>::infinity(); o[1] = CUDART_INF_F; }",
                        "kernel.cu", use_cache=False)
    assert res.ok, res.log


def test_one_case_is_one_case(kata, tmp_path):
    r = kata("grade", str(ROOT / "solutions" / "vector-add"), "--kata", "vector-add", "--backend", "cpu", "--case", "n=5")
    assert "passed 1 case;" in r.output and "1 cases" not in r.output and "1 case passed" in r.output


def test_an_interview_of_half_a_minute_says_30_s(tmp_path):
    from grader.practice.interview_report import InterviewReport, render_html, render_terminal

    report = InterviewReport("s1", 1_700_000_000, 1_700_000_030, 1_700_000_030, "deadline", "cpu", 7, ())
    out = io.StringIO()
    render_terminal(report, Terminal(file=out))
    assert "30 s of 30 s" in out.getvalue() and "0 min" not in out.getvalue()
    assert "30 s session" in render_html(report)


def test_interview_summary_piped_is_not_cut(tmp_path):
    from grader.practice.interview_report import InterviewReport, KataOutcome, SuiteResult, render_terminal

    long = "fails for n = 1025: out[1024] = 7, expected 9 " + "x" * 150
    k = KataOutcome("scan", "Inclusive scan", SuiteResult("fail", 12, long, ("out[3] = 1, expected 2",)),
                    SuiteResult("skipped", 0), time_used_s=60, attempts=1, hints=0, hints_total=3)
    out = io.StringIO()
    render_terminal(InterviewReport("s1", 0, 600, 60, "submitted", "cpu", 7, (k,)), Terminal(file=out))
    text = out.getvalue()
    assert "verdict" in text and "findings" in text and "…" not in text
    assert long in text and "out[3] = 1, expected 2" in text  # brackets kept, nothing cut


def test_moe_dispatch_statement_names_the_real_integer_poison():
    from harness.sandbox.protocol import POISON_INT_BYTE

    text = catalog.load("moe-dispatch").file("statement.md").read_text()
    assert f"0x{POISON_INT_BYTE:X}" in text and "(`-1` for the integers" not in text


def test_paged_attention_statement_shows_the_stubs_cache_type():
    kata = catalog.load("paged-attention")
    stub = kata.file("stub.cu").read_text()
    statement = kata.file("statement.md").read_text()
    assert "const unsigned short* __restrict__ k_cache" in stub
    assert "const unsigned short* k_cache" in statement and "const half* k_cache" not in statement


def test_install_advice_never_names_kata_on_the_package_index():
    from harness.frontends.languages import PYTHON

    for lang in PYTHON:
        assert "kata[" not in lang.install and f".[{lang.name}]" in lang.install


# -- progress ------------------------------------------------------------------------------------

def test_progress_is_silent_when_piped_unless_asked():
    quiet = io.StringIO()
    with StatusLine("auto", Terminal(file=quiet)) as line:
        line.update("compile")
    assert quiet.getvalue() == ""
    asked = io.StringIO()
    with StatusLine("on", Terminal(file=asked)) as line:
        for n in (1, 2):
            line.update("cases", n, 26)
        line.update("sanitizer")
    assert asked.getvalue().splitlines() == ["kata: cases", "kata: sanitizer"]


def test_progress_on_a_terminal_appears_after_two_seconds_with_the_stage_and_count():
    out = io.StringIO()
    line = StatusLine("auto", Terminal(file=out, force_terminal=True, width=80))
    line.started = time.monotonic() - 5
    with line:
        line.update("cases", 7, 26)
        from rich.spinner import Spinner

        shown = line.__rich__()
        assert isinstance(shown, Spinner) and "cases 7/26 · 5 s" in shown.text.plain
    line.started = time.monotonic()
    assert line.__rich__().plain == ""  # a quick grade never flickers


def test_grade_progress_flag_names_the_stages_on_stderr(tmp_path):
    ws = tmp_path / "ws"
    r = CliRunner().invoke(cli, ["start", "vector-add", str(ws)])
    assert r.exit_code == 0
    (ws / "kernel.cu").write_text("not C at all\n")
    r = CliRunner().invoke(cli, ["grade", str(ws), "--backend", "cpu", "--progress"])
    assert "kata: compile" in r.stderr and "kata: compile" not in r.stdout
    quiet = CliRunner().invoke(cli, ["grade", str(ws), "--backend", "cpu"])
    assert "kata: compile" not in quiet.stderr


def test_interview_report_links_each_katas_grade_page(tmp_path, fake_backend, monkeypatch):
    from grader.cli import interview

    monkeypatch.setattr(interview, "require_sandbox", lambda: None)
    runner = CliRunner()
    assert runner.invoke(cli, ["interview", "start", "--katas", "vector-add", "--minutes", "30"]).exit_code == 0
    (session,) = [p for p in tmp_path.iterdir() if (p / "vector-add").is_dir()]
    from grader.catalog import load

    for name in ("kernel.cu", "launch.py"):
        (session / "vector-add" / name).write_text((load("vector-add").solution_dir / name).read_text())
    r = runner.invoke(cli, ["interview", "submit", "-y"])
    assert r.exit_code in (0, 1), r.output
    report = next(session.glob("*.html")).read_text()
    link = ".submitted/vector-add/kata-grade.html"
    assert f'href="{link}"' in report and "kata grade · vector-add" in (session / link).read_text()


def test_setup_says_exit_3_for_an_unwritable_home(unwritable_home, monkeypatch):
    from harness.frontends import clang, cuda_folder

    if not clang.available():
        pytest.skip("the clang front end is not installed: setup has nothing to write")
    monkeypatch.delenv(cuda_folder.ENV, raising=False)
    r = CliRunner().invoke(cli, ["setup"])
    assert r.exit_code == 3 and "Traceback" not in r.output and "KATA_HOME" in r.output


def test_every_grade_names_its_compiler(kata, tmp_path):
    from harness.frontends import nvrtc

    if not nvrtc.available():
        pytest.skip("NVRTC is not installed")
    ws = _workspace(kata, tmp_path, source="not C\n")
    r = kata("grade", str(ws), "--backend", "cpu")
    clang = os.environ.get("KATA_FRONTEND") == "clang"  # CI's second pass
    expected = "· compiled by clang (KATA_FRONTEND=clang)" if clang else "· compiled by NVRTC 1"
    assert expected in r.output.splitlines()[-2]  # the backend line

