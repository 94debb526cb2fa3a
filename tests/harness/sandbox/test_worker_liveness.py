"""The grader never waits on a dead or wedged worker: every way the worker can die or stall (killed
before, during or between cases, mid-message, while starting, or beside a second worker) ends the
run within a bounded time with a Problem that says what happened, and the next run works."""
import os
import signal
import threading
import time

import numpy as np
import pytest

from harness.sandbox.isolation import ArgValue, Program, RunSpec, Worker

LIMIT_S = 30.0  # a wait longer than this is the bug under test (the timeouts below are 60 s)

# launch.py's `mode` picks how the worker misbehaves: launch.py runs in a process of its own, so the
# misbehaviour is the fake backend's, in the worker, on a memset of byte 200 + mode (fakes.misbehave):
# kill itself, hang, fork, write to the pipe, as a backend (or a library it calls) could.
LAUNCH = '''
def launch(gpu, out, mode):
    gpu.memset(out, 1)
    if mode:
        gpu.memset(out, 200 + mode)
'''


@pytest.fixture
def program(tmp_path):
    (tmp_path / "launch.py").write_text(LAUNCH)
    return Program("fakes:make", "", None, "kernel.cu", str(tmp_path / "launch.py"))


def spec(mode=0, count=4):
    return RunSpec((ArgValue("out", "out", None, "uint8", count), ArgValue("mode", "scalar", mode)))


def bounded(fn, *args, limit=LIMIT_S):
    """fn(*args), failing the test (not hanging it) when it takes longer than `limit`."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("value", fn(*args)), daemon=True)
    start = time.monotonic()
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"{fn} waited more than {limit:.0f} s"
    return box["value"], time.monotonic() - start


def passes(worker):
    result, _ = bounded(worker.run, spec())
    assert result.problem is None, result.problem
    assert result.outputs["out"].tolist() == [1, 1, 1, 1]


def wait_dead(pid):
    # Waitable, not merely "Z": after SIGKILL the main thread shows Z in /proc while the process's
    # other threads still exit, and until they have, waitpid (so is_alive) still says "running".
    for _ in range(200):
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return
        except ChildProcessError:  # already reaped
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} is still running")


@pytest.mark.parametrize("mode", [1, 3, 4, 5])
def test_a_worker_killed_mid_case_is_reported_and_replaced(program, mode):
    with Worker(program, timeout_s=60) as w:
        passes(w)
        result, took = bounded(w.run, spec(mode))
        assert took < 20
        assert result.problem.kind == "memory" and "died (SIGKILL, signal 9) while running the case" in \
            result.problem.message
        passes(w)
        assert w.restarts == 1


def test_a_crash_names_its_signal(program):
    with Worker(program, timeout_s=60) as w:
        result, _ = bounded(w.run, spec(7))
        assert result.problem.kind == "crash" and "SIGABRT, signal 6" in result.problem.message
        passes(w)


def test_a_worker_wedged_mid_message_times_out(program):
    with Worker(program, timeout_s=3) as w:
        result, took = bounded(w.run, spec(6))
        assert result.problem.kind == "timeout" and took < 15
        passes(w)


def test_killed_before_the_first_case_or_between_cases_the_case_still_runs(program):
    with Worker(program, timeout_s=60) as w:
        assert w.start() is None
        pid = w.pid
        os.kill(pid, signal.SIGKILL)
        wait_dead(pid)
        passes(w)  # the case never ran in the dead worker: a fresh one runs it
        pid = w.pid
        os.kill(pid, signal.SIGKILL)
        wait_dead(pid)
        passes(w)
        assert w.restarts == 2


def test_killed_by_someone_else_mid_case(program):
    with Worker(program, timeout_s=60) as w:
        assert w.start() is None
        threading.Timer(1.0, os.kill, (w.pid, signal.SIGKILL)).start()
        result, took = bounded(w.run, spec(2))
        assert result.problem.kind == "memory" and "signal 9" in result.problem.message and took < 15
        passes(w)


def test_killed_just_before_a_case_ends_either_way_in_bounded_time(program):
    with Worker(program, timeout_s=60) as w:
        passes(w)
        os.kill(w.pid, signal.SIGKILL)  # no wait: the kill races the next run's liveness check
        result, _ = bounded(w.run, spec())
        assert result.problem is None or "signal 9" in result.problem.message
        passes(w)


def test_a_huge_result_and_a_huge_input_cross_the_pipe(program):
    with Worker(program, timeout_s=60) as w:
        count = 64 << 20  # 64 MiB each way: far beyond a pipe's buffer
        result, _ = bounded(w.run, RunSpec((ArgValue("out", "out", None, "uint8", count),
                                            ArgValue("mode", "scalar", 0))))
        assert result.problem is None and result.outputs["out"].size == count
        assert int(result.outputs["out"][-1]) == 1
        passes(w)


def test_two_workers_at_once_one_dies(program):
    with Worker(program, timeout_s=60) as a, Worker(program, timeout_s=60) as b:
        got = {}
        threads = [threading.Thread(target=lambda: got.setdefault("a", a.run(spec(3)))),
                   threading.Thread(target=lambda: got.setdefault("b", b.run(spec(0, 1 << 20))))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(LIMIT_S)
        assert not any(t.is_alive() for t in threads)
        assert "signal 9" in got["a"].problem.message and got["b"].problem is None
        passes(a)
        passes(b)


def test_outputs_are_intact(program):
    with Worker(program, timeout_s=60) as w:
        result, _ = bounded(w.run, spec(0, 10))
        assert np.all(result.outputs["out"] == 1)
