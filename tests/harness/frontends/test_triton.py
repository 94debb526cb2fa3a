"""Triton kernels graded on the CPU emulator: start, compile errors and findings at kernel.py lines,
launch checks against the compiled kernel. Each grade runs one or two cases (--case) to stay lean."""
import json
import shutil

import pytest

pytest.importorskip("triton")

from grader import catalog  # noqa: E402
from grader.catalog import wrong  # noqa: E402

SOLUTION = catalog.load("reduce").solution_dir / "triton"


def grade(kata, folder, *extra):
    r = kata("grade", str(folder), "--kata", "reduce", "--backend", "cpu", "--json", *extra)
    return r.exit_code, json.loads(r.output)


def workspace(tmp_path, kernel: str | None = None, launch: str | None = None):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    shutil.copy(SOLUTION / "kernel.py", ws / "kernel.py")
    shutil.copy(SOLUTION / "launch.py", ws / "launch.py")
    if kernel is not None:
        (ws / "kernel.py").write_text(kernel)
    if launch is not None:
        (ws / "launch.py").write_text(launch)
    return ws


def test_start_makes_a_triton_workspace_whose_stub_fails(kata):
    r = kata("start", "reduce", "ws", "--lang", "triton")
    assert r.exit_code == 0, r.output
    assert "kernel.py" in r.output and not (catalog.katas_root() / "ws").exists()
    text = open("ws/kernel.py").read()
    assert "@triton.jit" in text and "TODO" in text and 'lang = "triton"' in open("ws/.kata").read()
    r = kata("grade", "ws", "--backend", "cpu", "--case", "n=33", "--json")
    data = json.loads(r.output)
    assert r.exit_code == 1 and data["verdict"] == "fail" and data["reasons"] == ["wrong-answer"]


def test_list_names_the_languages_of_each_kata(kata):
    out = kata("list").output
    row = " ".join(line for line in out.splitlines() if line.startswith("reduce") or "triton" in line)
    assert "triton" in row and "numba" in row


def test_the_solution_is_correct_and_reads_in_bounds(kata, tmp_path):
    code, data = grade(kata, SOLUTION, "--case", "n=1025")
    assert data["stage"] in ("done", "sanitizer"), data["headline"]
    assert data["correctness"]["first_failure"] is None
    assert not [f for f in data["findings"] if f["kind"] == "out-of-bounds"]


def test_a_compile_error_is_the_compile_stage_at_the_kernel_line(kata, tmp_path):
    source = (SOLUTION / "kernel.py").read_text().replace("tl.arange(0, BLOCK)", "tl.arange(0, BLOCK - 1)")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "BLOCK - 1" in text)
    code, data = grade(kata, workspace(tmp_path, source), "--case", "n=33")
    assert code == 1 and data["stage"] == "compile" and data["reasons"] == ["compile-error"]
    assert f"kernel.py:{line}: arange's range must be a power of 2" in data["headline"]


def test_a_missing_tail_mask_is_out_of_bounds_at_the_load_line(kata, tmp_path):
    ws = wrong.materialise("reduce", "missing_tail_mask", tmp_path / "wrong", lang="triton")
    line = next(i for i, text in enumerate((ws / "kernel.py").read_text().splitlines(), 1)
                if "tl.load(x + offs)" in text)
    code, data = grade(kata, ws, "--case", "n=1025")
    assert code == 1 and "out-of-bounds" in data["reasons"], data["headline"]
    oob = [f for f in data["findings"] if f["kind"] == "out-of-bounds"]
    assert oob and oob[0]["file"] == "kernel.py" and oob[0]["line"] == line


def test_a_block_that_disagrees_with_num_warps_is_a_launch_error(kata, tmp_path):
    plan = (SOLUTION / "launch.py").read_text().replace("num_warps=8,", "num_warps=8, block=128,")
    code, data = grade(kata, workspace(tmp_path, launch=plan), "--case", "n=33")
    assert code == 1 and data["reasons"] == ["launch-error"]
    assert "launch.py:9" in data["headline"] and ".reqntid 256" in data["headline"]


def test_a_missing_constexpr_is_a_launch_error_naming_it(kata, tmp_path):
    plan = (SOLUTION / "launch.py").read_text().replace("constexprs=dict(BLOCK=BLOCK)", "constexprs={}")
    code, data = grade(kata, workspace(tmp_path, launch=plan), "--case", "n=33")
    assert code == 1 and data["reasons"] == ["launch-error"]
    assert "constexpr 'BLOCK'" in data["headline"]


def test_without_triton_lang_triton_exits_3_naming_the_install(kata, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "triton" else real(name, *a))
    r = kata("start", "reduce", "ws", "--lang", "triton")
    assert r.exit_code == 3 and "pip install 'kata[triton]'" in r.output


def test_switching_a_workspace_to_triton_keeps_the_cuda_kernel_aside(kata):
    assert kata("start", "reduce", "ws").exit_code == 0
    r = kata("start", "reduce", "ws", "--lang", "triton")
    assert r.exit_code == 0, r.output
    assert open("ws/kernel.cu.bak").read().startswith("// Sum n floats")
    assert "@triton.jit" in open("ws/kernel.py").read() and "constexprs" in open("ws/launch.py").read()


def test_a_kata_without_a_triton_stub_says_which_languages_it_has(kata):
    r = kata("start", "bfs", "ws", "--lang", "triton")
    assert r.exit_code == 2 and "bfs has no triton stub (it offers: cuda)" in r.output


def test_the_triton_solution_is_shown_after_giving_up(kata):
    r = kata("solution", "softmax", "--lang", "triton", "--give-up")
    assert r.exit_code == 0 and "solutions/softmax/triton/kernel.py" in r.output and "ONE_TILE" in r.output
