"""Every command through CliRunner, and every bad input the issue lists: message and exit code."""
import json

import pytest

from grader.pipeline import run

GOOD = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (threadIdx.x == 0 && n > 0) atomicAdd(out, x[0]);
}
'''


def _workspace(kata, tmp_path):
    assert kata("start", "reduce", "ws").exit_code == 0
    folder = tmp_path / "ws"
    (folder / "kernel.cu").write_text(GOOD)
    return folder


@pytest.fixture
def ws(kata, tmp_path, cpu_backend):
    """A workspace graded by the real CPU emulator (bad inputs must be caught there)."""
    return _workspace(kata, tmp_path)


@pytest.fixture
def fake_ws(kata, tmp_path, fake_backend):
    """A workspace graded by the numpy fake, where a kernel's behaviour is chosen by a marker."""
    return _workspace(kata, tmp_path)


def plan(folder, body):
    (folder / "launch.py").write_text("def launch(gpu, x, out, n):\n    gpu.memset(out, 0)\n" +
                                      "".join(f"    {line}\n" for line in body.splitlines()))


def test_list(kata):
    r = kata("list")
    assert r.exit_code == 0 and "reduce" in r.output and "Sum reduction" in r.output


def test_list_level_shows_only_that_level(kata):
    r = kata("list", "--level", "warm-up")
    ids = {line.split()[0] for line in r.output.splitlines() if line.strip()}
    assert r.exit_code == 0 and "vector-add" in ids and "reduce" not in ids
    assert kata("list", "--level", "easy").exit_code == 2


def test_list_shows_progress_and_best_score(kata, tmp_path):
    from grader.practice.store import Store

    with Store() as store:
        for kata_id, verdict, score in (("reduce", "fail", None), ("reduce", "pass", 0.61),
                                        ("reduce", "pass", 0.734), ("bfs", "fail", None),
                                        ("matmul", "pass", None)):
            store.add_workspace(kata_id, str(tmp_path / kata_id))
            store.add_attempt(kata_id, str(tmp_path / kata_id), verdict, "gpu", "h", score=score)
    rows = {line.split()[0]: line for line in kata("list").output.splitlines() if line.strip()}
    assert "best score" in rows["id"]
    assert "passing" in rows["reduce"] and rows["reduce"].rstrip().endswith("0.73")
    assert "failing" in rows["bfs"] and rows["bfs"].rstrip().endswith("-")
    assert "passing" in rows["matmul"] and "no GPU grade yet" in rows["matmul"]
    assert "not started" in rows["scan"]


def test_start_makes_a_workspace(kata, tmp_path):
    r = kata("start", "reduce")
    assert r.exit_code == 0, r.output
    for name in ("kernel.cu", "launch.py", "statement.md", ".kata"):
        assert (tmp_path / "reduce" / name).is_file()
    assert 'kata = "reduce"' in (tmp_path / "reduce" / ".kata").read_text()
    assert "TODO" in (tmp_path / "reduce" / "kernel.cu").read_text()


def test_start_refuses_to_overwrite_work_and_force_keeps_a_backup(kata, tmp_path):
    kata("start", "reduce", "w")
    (tmp_path / "w" / "kernel.cu").write_text("// my work\n")
    r = kata("start", "reduce", "w")
    assert r.exit_code == 2 and "will not overwrite" in r.output and "--force" in r.output
    assert (tmp_path / "w" / "kernel.cu").read_text() == "// my work\n"
    r = kata("start", "reduce", "w", "--force")
    assert r.exit_code == 0
    assert (tmp_path / "w" / "kernel.cu.bak").read_text() == "// my work\n"


def test_unknown_kata_id_suggests_one(kata):
    r = kata("start", "reduse")
    assert r.exit_code == 2 and "no kata named 'reduse'" in r.output and "kata start reduce" in r.output
    r = kata("grade", ".", "--kata", "redcue")
    assert r.exit_code == 2 and "did you mean" in r.output


def test_grade_pass_and_json(kata, fake_ws):
    ws = fake_ws
    r = kata("grade", "ws", "--examples", "2")
    assert r.exit_code == 0, r.output
    assert "PASS" in r.output and "backend:" in r.output
    r = kata("grade", "ws", "--json", "--examples", "2")
    data = json.loads(r.output)
    assert r.exit_code == 0 and data["verdict"] == "pass" and data["kata"] == "reduce"
    assert set(data) >= {"backend", "compile", "correctness", "findings", "counters", "performance"}
    assert not (ws / ".hypothesis").exists() and not (ws.parent / ".hypothesis").exists()


def test_grade_failure_prints_the_case_and_the_rerun_command(kata, fake_ws):
    ws = fake_ws
    (ws / "kernel.cu").write_text(GOOD + 'extern "C" __global__ void mode_wrong() {}\n')
    r = kata("grade", "ws", "--examples", "2")
    assert r.exit_code == 1
    assert "fails for n = 255: out[0] =" in r.output and "rerun: kata grade ws --case n=255" in r.output
    r = kata("grade", "ws", "--case", "n=100")
    assert r.exit_code == 0  # the fake only drops an element above n = 100


def test_missing_kernel(kata, tmp_path, fake_backend):
    (tmp_path / "empty").mkdir()
    r = kata("grade", "empty", "--kata", "reduce")
    assert r.exit_code == 2 and "kernel.cu: not found" in r.output and "kata start reduce" in r.output


def test_no_marker_and_no_kata(kata, tmp_path):
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "kernel.cu").write_text(GOOD)
    r = kata("grade", "k")
    assert r.exit_code == 2 and "--kata ID" in r.output


def test_empty_kernel(kata, ws):
    (ws / "kernel.cu").write_text("\n\n")
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "kernel.cu is empty" in r.output


def test_binary_kernel(kata, ws):
    (ws / "kernel.cu").write_bytes(bytes(range(256)))
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "not a text file" in r.output


def test_syntax_error_names_the_line(kata, ws):
    (ws / "kernel.cu").write_text('extern "C" __global__ void reduce(const float* x, float* out, int n)\n{\n  out[0] = x[0]\n}\n')
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "does not compile: kernel.cu:4" in r.output and 'expected a ";"' in r.output


def test_wrong_kernel_name(kata, ws):
    (ws / "kernel.cu").write_text(GOOD.replace("void reduce", "void reduce_sum"))
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "no kernel named 'reduce'" in r.output and "reduce_sum" in r.output


def test_wrong_parameter_count(kata, ws):
    (ws / "kernel.cu").write_text(GOOD.replace(", int n)", ")").replace("&& n > 0", ""))
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "takes 2 arguments" in r.output and "launch.py:" in r.output


def test_wrong_parameter_types(kata, ws):
    (ws / "kernel.cu").write_text(GOOD.replace("const float* x, float* out, int n", "int n, const float* x, float* out")
                                  .replace("x[0]", "x[0]"))
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "argument 1 of reduce" in r.output and "device buffer" in r.output


def test_launch_py_exception(kata, ws):
    plan(ws, "blocks = n // 0")
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "ZeroDivisionError" in r.output and "launch.py:3" in r.output


def test_block_over_1024(kata, ws):
    plan(ws, 'gpu.launch("reduce", grid=1, block=2048, args=(x, out, n))')
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "2048 threads" in r.output and "at most 1024" in r.output


def test_too_much_shared_memory(kata, ws):
    plan(ws, 'gpu.launch("reduce", grid=1, block=256, args=(x, out, n), shared=1 << 20)')
    r = kata("grade", "ws")
    assert r.exit_code == 1 and "1048576 bytes of dynamic shared memory" in r.output


def test_bad_case_option(kata, ws):
    r = kata("grade", "ws", "--case", "n")
    assert r.exit_code == 2 and "KEY=VALUE" in r.output


def test_gpu_backend_without_a_gpu(kata, ws, monkeypatch):
    from harness.backends import gpu

    monkeypatch.setattr(gpu, "available", lambda: False)
    r = kata("grade", "ws", "--backend", "gpu")
    assert r.exit_code == 3 and "CuPy sees no CUDA GPU" in r.output and "--backend cpu" in r.output


def test_usage_errors_exit_2(kata):
    assert kata("grade", "--backend", "tpu").exit_code == 2
    assert kata("nonsense").exit_code == 2


def test_internal_error_exits_4_with_a_traceback(kata, ws, monkeypatch):
    def broken(*a, **k):
        raise RuntimeError("a bug of ours")
    monkeypatch.setattr(run, "grade", broken)
    r = kata("grade", "ws")
    assert r.exit_code == 4 and "Traceback" in r.output and "please report" in r.output


def test_hint(kata, ws, monkeypatch):
    monkeypatch.chdir(ws)
    r = kata("hint")
    assert r.exit_code == 0 and "hint 1/3 for reduce" in r.output


def test_hint_for_a_folder_in_an_interview_counts_in_that_session(kata, tmp_path):
    from grader.practice.marker import MARKER
    from grader.practice.store import Store

    (tmp_path / "interview").mkdir()
    (tmp_path / "interview" / MARKER).write_text('{"session": "s1"}')
    ws = tmp_path / "interview" / "reduce"
    ws.mkdir()
    (ws / ".kata").write_text('kata = "reduce"\n')
    r = kata("hint", str(ws))  # from the folder above: the cwd is in no session
    assert r.exit_code == 0 and "hint 1/3 for reduce" in r.output
    with Store() as store:
        assert store.hints_taken("reduce", session_id="s1") == 1
        assert store.hints_taken("reduce") == 0


def test_hint_needs_a_kata(kata, tmp_path):
    r = kata("hint", str(tmp_path))
    assert r.exit_code == 2 and "--kata ID" in r.output
    assert kata("hint", "--kata", "reduce").exit_code == 0


def test_dev_check_unknown_id(kata):
    r = kata("dev", "check", "nope")
    assert r.exit_code == 2 and "no kata named 'nope'" in r.output
