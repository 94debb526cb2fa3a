"""Bad input answered clearly: each case asserts the exit code, the message naming what is wrong
(the argument, or file:line) and the next step, no traceback, and the learner's files unchanged.
Most stop before any grade runs."""
import pytest

from hostile_helpers import snapshot

# (id, extra arguments to `kata grade WS`, exit code, phrases the output must hold)
CASE_ARGS = [
    ("n-not-a-number", ["--case", "n=abc"], 2, ["--case n=abc", "an integer in 1..", "parameters:"]),
    ("n-negative", ["--case", "n=-5"], 2, ["--case n=-5", "must be in 1..", "parameters:"]),
    ("n-zero", ["--case", "n=0"], 2, ["--case n=0", "must be in 1.."]),
    ("n-huge", ["--case", "n=99999999999"], 2, ["--case n=99999999999", "must be in 1.."]),
    ("n-float", ["--case", "n=1.5"], 2, ["--case n=1.5", "an integer"]),
    ("n-empty", ["--case", "n="], 2, ["--case n=", "an integer"]),
    ("n-bool-ish", ["--case", "n=true"], 2, ["--case n=true", "an integer"]),
    ("no-equals", ["--case", "n"], 2, ["expected KEY=VALUE"]),
    ("no-key", ["--case", "=5"], 2, ["expected KEY=VALUE"]),
    ("unknown-key", ["--case", "n=5", "--case", "m=3"], 2, ["has no parameter 'm'", "parameters:"]),
    ("unknown-key-only", ["--case", "size=5"], 2, ["has no parameter 'size'"]),
    ("bad-choice", ["--case", "n=5", "--case", "dist=bogus"], 2, ["dist=bogus", "choose one of mixed"]),
    ("missing-n", ["--case", "dist=mixed"], 2, ["--case needs n", "parameters:"]),
    ("examples-negative", ["--examples", "-1"], 2, ["--examples"]),
    ("examples-huge", ["--examples", "100000"], 2, ["--examples"]),
    ("seed-text", ["--seed", "abc"], 2, ["--seed"]),
    ("backend-bogus", ["--backend", "tpu"], 2, ["--backend"]),
    ("kata-unknown", ["--kata", "reduse"], 2, ["reduse", "reduce"]),
]


@pytest.mark.parametrize("name, args, code, says", CASE_ARGS, ids=[c[0] for c in CASE_ARGS])
def test_grade_arguments(kata, workspace, name, args, code, says):
    ws = workspace()
    before = snapshot(ws)
    got, out = kata("grade", ws, *args)
    assert got == code, out
    for phrase in says:
        assert phrase in out, (phrase, out)
    assert "Traceback" not in out
    assert snapshot(ws) == before


KATAS = ["reduce", "scan", "softmax", "histogram", "matmul", "spmv", "topk", "bfs", "attention"]


@pytest.mark.parametrize("kata_id", KATAS)
def test_every_kata_checks_its_case_keys_and_ranges(kata, tmp_path, kata_id):
    from grader.catalog import load

    k = load(kata_id)
    code, out = kata("start", kata_id, tmp_path / kata_id)
    assert code == 0, out
    ws = tmp_path / kata_id
    before = snapshot(ws)
    code, out = kata("grade", ws, "--case", "nonsense=1")
    assert code == 2 and "has no parameter 'nonsense'" in out and "parameters:" in out, out
    ranged = next(p for p in k.params if p.choices is None)
    code, out = kata("grade", ws, "--case", f"{ranged.name}=-999999999999")
    assert code == 2 and f"--case {ranged.name}=-999999999999" in out and "Traceback" not in out, out
    assert snapshot(ws) == before


FILES = [
    ("kernel-empty", "", None, 1, ["kernel.cu is empty", "--force` for a fresh stub in this folder"]),
    ("kernel-binary", "\0\0\0", None, 1, ["not a text file"]),
    ("launch-syntax", None, "def launch(gpu, x, out, n)\n    pass\n", 1, ["launch.py:1", "syntax error"]),
    ("launch-no-function", None, "x = 1\n", 1, ["defines no launch(gpu"]),
    ("launch-raises-at-import", None, "import nonexistent_module_xyz\n", 1, ["launch.py:1", "ModuleNotFoundError"]),
    ("launch-bad-kernel-name", None, "def launch(gpu, x, out, n):\n    gpu.launch('reduc', 1, 32, (x, out, n))\n",
     1, ["launch.py:2", "did you mean 'reduce'"]),
    ("launch-block-too-big", None, "def launch(gpu, x, out, n):\n    gpu.launch('reduce', 1, 2048, (x, out, n))\n",
     1, ["launch.py:2", "at most 1024"]),
    ("launch-wrong-arg-count", None, "def launch(gpu, x, out, n):\n    gpu.launch('reduce', 1, 32, (x, out))\n",
     1, ["launch.py:2", "takes 3 arguments"]),
    ("launch-float-grid", None, "def launch(gpu, x, out, n):\n    gpu.launch('reduce', n / 32, 32, (x, out, n))\n",
     1, ["launch.py:2", "gpu.cdiv"]),
    ("launch-numpy-array", None, "import numpy as np\ndef launch(gpu, x, out, n):\n"
     "    gpu.launch('reduce', 1, 32, (np.zeros(n, np.float32), out, n))\n", 1, ["launch.py:3", "device buffers only"]),
    ("launch-zero-division", None, "def launch(gpu, x, out, n):\n    k = n // 0\n", 1, ["launch.py:2", "ZeroDivisionError"]),
]


@pytest.mark.parametrize("name, kernel, launch, code, says", FILES, ids=[f[0] for f in FILES])
def test_bad_files(kata, workspace, name, kernel, launch, code, says):
    from hostile_helpers import KERNEL

    ws = workspace(launch, KERNEL if kernel is None else kernel)
    before = snapshot(ws)
    got, out = kata("grade", ws, "--case", "n=5")
    assert got == code, out
    for phrase in says:
        assert phrase in out, (phrase, out)
    assert "Traceback" not in out
    assert snapshot(ws) == before


def test_launch_py_output_is_shown_capped(kata, workspace):
    ws = workspace("def launch(gpu, x, out, n):\n    for i in range(100):\n        print('line', i)\n"
                   "    gpu.memset(out, 0)\n    gpu.launch('reduce', 1, 32, (x, out, n))\n")
    code, out = kata("grade", ws, "--case", "n=5")
    assert code == 0 and "launch.py printed (case n = 5)" in out and "line 0" in out, out
    assert "line 99" not in out and "60 more lines" in out


def test_an_unusable_kata_home_is_exit_3_after_the_report(kata, workspace, tmp_path, monkeypatch):
    home = tmp_path / "a-file"
    home.write_text("not a folder")
    monkeypatch.setenv("KATA_HOME", str(home))
    ws = workspace()
    code, out = kata("grade", ws, "--case", "n=5")
    assert code == 3, out
    assert "PASS" in out and "attempt NOT recorded" in out and str(home) in out and "KATA_HOME" in out


def test_a_corrupt_store_is_exit_3_naming_it(kata, workspace, kata_home):
    kata_home.mkdir(parents=True)
    (kata_home / "kata.db").write_bytes(b"this is not sqlite" * 100)
    ws = workspace()
    code, out = kata("grade", ws, "--case", "n=5")
    assert code == 3, out
    assert "kata.db" in out and "aside" in out and "Traceback" not in out


def test_a_case_grade_never_marks_the_kata_passing(kata, workspace):
    """An `x[0]`-only kernel passes n=1; that must not unlock the solution or count as a pass."""
    ws = workspace()
    code, out = kata("grade", ws, "--case", "n=1")
    assert code == 0 and "diagnostic" in out, out
    code, out = kata("solution", "reduce")
    assert code == 2 and "unlocks once your kernel passes" in out, out
    code, out = kata("list")
    assert "passing" not in out


def test_a_plan_stuck_in_a_loop_names_launch_py_and_its_line(workspace, fake_choice):
    from grader import pipeline

    ws = workspace("def launch(gpu, x, out, n):\n    while True:\n        pass\n")
    before = snapshot(ws)
    r = pipeline.grade(None, ws, backend=fake_choice, case={"n": 5}, timeout_s=6)
    print(r.headline)
    assert r.verdict == "fail" and r.reasons == ("timeout",), r.headline
    assert "launch.py:2" in r.headline or "launch.py:3" in r.headline, r.headline
    assert "endless loop in launch.py" in r.headline
    assert snapshot(ws) == before


ASSERTING = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(n < LIMIT);
    if (i < n) atomicAdd(out, x[i]);
}
'''


@pytest.mark.parametrize("limit, fails", [(3, True), (1 << 30, False)])
def test_assert_in_a_kernel_names_its_line_on_the_emulator(workspace, monkeypatch, limit, fails):
    """assert() is __assertfail on the GPU: "assertion failed at kernel.cu:4", exit 1, not a grader
    error; its twin whose condition holds passes."""
    from grader import pipeline

    ws = workspace(kernel=ASSERTING.replace("LIMIT", str(limit)))
    before = snapshot(ws)
    r = pipeline.grade(None, ws, backend="cpu", case={"n": 5, "dist": "mixed"})
    if fails:
        assert r.verdict == "fail" and "assertion failed at kernel.cu:4" in r.headline, r.headline
    else:
        assert r.verdict == "pass", r.headline
    assert snapshot(ws) == before
