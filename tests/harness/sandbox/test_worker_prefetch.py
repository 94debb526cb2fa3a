"""Worker.prefetch: background work in the worker process that nobody waits for, until a later
`run` (always) or a `call` target (harness.sandbox.worker.wait_background) needs it; a failure in it is
swallowed and changes nothing else."""
import time

from fakes import FAKE
from harness.sandbox.isolation import ArgValue, Program, RunSpec, Worker

# out[0..3] = 1 when the prefetch's mark file exists at the time the plan runs, else 2
LAUNCH = '''
import os

def launch(gpu, out, mark):
    gpu.memset(out, 1 if os.path.exists(MARK) else 2)
'''


def program(tmp_path, mark):
    (tmp_path / "launch.py").write_text(LAUNCH.replace("MARK", repr(str(mark))))
    return Program(FAKE, "", None, "kernel.cu", str(tmp_path / "launch.py"))


def spec():
    return RunSpec((ArgValue("out", "out", None, "uint8", 4), ArgValue("mark", "scalar", 0)))


def test_prefetch_returns_at_once_and_a_call_target_can_wait_for_it(tmp_path):
    mark = tmp_path / "mark"
    with Worker(program(tmp_path, mark), timeout_s=60) as w:
        assert w.start() is None
        t0 = time.perf_counter()
        assert w.prefetch("fakes:slow_mark", path=str(mark), seconds=1.5)
        assert time.perf_counter() - t0 < 0.5  # no reply awaited
        state, problem = w.call("fakes:background_state", 60, path=str(mark))
        assert problem is None and state["mark"] == "done" and state["finished"] and state["errors"] == []
        assert state["waited"] > 0.5


def test_a_run_starts_only_after_the_prefetch_finished(tmp_path):
    mark = tmp_path / "mark"
    with Worker(program(tmp_path, mark), timeout_s=60) as w:
        assert w.start() is None
        assert w.prefetch("fakes:slow_mark", path=str(mark), seconds=1.0)
        result = w.run(spec())
        assert result.problem is None and result.outputs["out"].tolist() == [1, 1, 1, 1]


def test_a_failing_prefetch_is_swallowed_and_the_worker_goes_on(tmp_path):
    mark = tmp_path / "mark"
    with Worker(program(tmp_path, mark), timeout_s=60) as w:
        assert w.start() is None
        assert w.prefetch("fakes:boom")
        assert w.prefetch("no_such_module:nothing")
        result = w.run(spec())
        assert result.problem is None and result.outputs["out"].tolist() == [2, 2, 2, 2]
        state, problem = w.call("fakes:background_state", 60)
        assert problem is None and len(state["errors"]) == 2  # both, in whichever order their threads ended
        assert any("the prefetch failed" in e for e in state["errors"])
        assert w.restarts == 0


def test_no_prefetch_without_a_live_worker(tmp_path):
    w = Worker(program(tmp_path, tmp_path / "mark"), timeout_s=60)
    assert w.prefetch("fakes:slow_mark", path=str(tmp_path / "mark")) is False  # nothing started for it
    assert w.pid is None


def test_closing_with_a_prefetch_still_running_does_not_wait_for_it(tmp_path):
    mark = tmp_path / "mark"
    w = Worker(program(tmp_path, mark), timeout_s=60)
    assert w.start() is None
    assert w.prefetch("fakes:slow_mark", path=str(mark), seconds=60)
    t0 = time.perf_counter()
    w.close()
    assert time.perf_counter() - t0 < 4 and not mark.exists()


def test_work_sent_beside_the_runs_does_not_hold_a_run_back_but_a_call_waits_for_it(tmp_path):
    mark = tmp_path / "mark"
    with Worker(program(tmp_path, mark), timeout_s=60) as w:
        assert w.start() is None
        assert w.prefetch("fakes:slow_mark", beside_runs=True, path=str(mark), seconds=3.0)
        result = w.run(spec())  # at once: the mark is not there yet
        assert result.problem is None and result.outputs["out"].tolist() == [2, 2, 2, 2]
        state, problem = w.call("fakes:background_state", 60, path=str(mark))
        assert problem is None and state["mark"] == "done" and state["finished"]


def test_a_start_beside_is_waited_for_never_doubled_and_a_close_meanwhile_leaves_no_process(tmp_path):
    import multiprocessing

    mark = tmp_path / "mark"
    with Worker(program(tmp_path, mark), timeout_s=60) as w:
        starting = w.start_beside()
        result = w.run(spec())  # waits for the start under way in the thread, then runs in that process
        starting.join()
        assert result.problem is None and w.restarts == 0 and w.pid is not None
    w = Worker(program(tmp_path, mark), timeout_s=60)
    w.start_beside()
    w.close()  # while the start may still be under way: it finishes, then is stopped
    assert w.pid is None and multiprocessing.active_children() == []
