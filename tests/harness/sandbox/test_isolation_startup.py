"""A worker that never becomes ready (hangs or dies while importing, killed while starting) is the
grader's problem, reported within the start-up deadline, and the next start works."""
import os
import threading
import time

import pytest

from harness.sandbox.isolation import ArgValue, Program, RunSpec, Worker

PLAN = "def launch(gpu, out):\n    gpu.memset(out, 1)\n"
BACKENDS = {
    "hangs": "import time\ntime.sleep(3600)\n",
    "exits": "import os\nos._exit(7)\n",
    "killed": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    # dies while a grandchild keeps the pipe open: no end-of-file ever reaches the grader
    "forks": "import os, time\nif os.fork() == 0:\n    time.sleep(40)\n    os._exit(0)\nos._exit(3)\n",
}
SPEC = RunSpec((ArgValue("out", "out", None, "uint8", 4),))


@pytest.fixture
def backends(tmp_path, monkeypatch):
    for name, source in BACKENDS.items():
        (tmp_path / f"kata_test_backend_{name}.py").write_text(source)
    (tmp_path / "launch.py").write_text(PLAN)
    monkeypatch.syspath_prepend(str(tmp_path))  # spawn hands the worker our sys.path
    return tmp_path


def program(folder, backend):
    return Program(backend, "", None, "kernel.cu", str(folder / "launch.py"))


@pytest.mark.parametrize("name, says", [("hangs", "did not start within 3 s"),
                                        ("exits", "exit code 7"),
                                        ("killed", "SIGKILL, signal 9"),
                                        ("forks", "exit code 3")])
def test_a_worker_that_never_becomes_ready(backends, name, says):
    with Worker(program(backends, f"kata_test_backend_{name}:make"), timeout_s=60, startup_s=3) as w:
        start = time.monotonic()
        result = w.run(SPEC)
        assert time.monotonic() - start < 20
        assert result.problem.kind == "internal" and says in result.problem.message
        assert w.pid is None
    with Worker(program(backends, "fakes:make"), timeout_s=60) as w:
        result = w.run(SPEC)
        assert result.problem is None and result.outputs["out"].tolist() == [1, 1, 1, 1]


def test_no_zombie_is_left_behind(backends):
    with Worker(program(backends, "kata_test_backend_killed:make"), startup_s=10) as w:
        w.run(SPEC)
    children = [p for p in os.listdir("/proc") if p.isdigit() and _parent(p) == os.getpid()
                and _state(p) == "Z"]
    assert not children


def _stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(") ", 1)[1].split()
    except OSError:
        return ["?", "0"]


def _parent(pid):
    return int(_stat(pid)[1])


def _state(pid):
    return _stat(pid)[0]


def test_a_child_that_dies_before_reading_its_start_up_data(backends, tmp_path, monkeypatch):
    """spawn writes its start-up data while holding the pipe's read end itself: if the program
    (PTX, cubin) travelled in it and the child died first, that write blocked the grader forever."""
    import multiprocessing.spawn

    fake = tmp_path / "python-dies"
    fake.write_text("#!/bin/sh\nexit 5\n")
    fake.chmod(0o755)
    monkeypatch.setattr(multiprocessing.spawn, "_python_exe", os.fsencode(fake))
    big = Program("fakes:make", "// " + "x" * (1 << 20), b"\0" * (1 << 20), "kernel.cu",
                  str(backends / "launch.py"))
    box = {}
    thread = threading.Thread(target=lambda: box.setdefault("r", Worker(big, startup_s=10).run(SPEC)),
                              daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive(), "the grader waited forever on a worker that never started"
    assert box["r"].problem.kind == "internal"
