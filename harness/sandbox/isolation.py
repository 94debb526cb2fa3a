"""Learner code (launch.py and the kernels it launches) runs in a worker process, never in ours.

One worker serves every case of a grade (starting Python and loading numpy costs ~0.5 s). A run
that hangs past its timeout is killed; a worker that dies (segfault, the memory cap, a C-level
abort) is restarted for the next case. Whatever happens comes back as a RunResult whose `problem`
says what and where, so the grader never shows a traceback for the learner's mistake.
"""
from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import shutil
import signal
import socket
import tempfile
import sys
import threading
import time
from harness.sandbox import wire
from harness.sandbox.protocol import (POISON_FLOAT_BYTE, POISON_INT_BYTE, ArgValue, Problem, Program,  # noqa: F401
                                      RunResult, RunSpec, poison_byte)

_STARTUP_S = 120.0  # importing numpy, the emulator (and numba) on a loaded 2-core machine
_LIVENESS_S = 0.2  # how often a wait on the worker checks that it is still alive
_GRACE_S = 5.0  # for a process that has exited to be reaped, or a finished reply to be read
_SPAWN_LOCK = threading.Lock()
class Worker:
    """A worker process for one program. Use as a context manager; `run` as often as needed.

    Every wait on the child has a deadline and watches the child's liveness: the pipe alone cannot
    say that the child died (a grandchild the learner's code forked may hold the child's end open,
    so no end-of-file ever comes), and a wait on it without a deadline once sat for 25 minutes beside
    a defunct worker. See _exchange."""

    def __init__(self, program: Program, timeout_s: float = 120.0, memory_bytes: int | None = None,
                 startup_s: float = _STARTUP_S):
        self.program = program
        self.timeout_s = timeout_s
        self.startup_s = startup_s
        # CUDA maps huge address ranges, so the cap applies to the CPU backend only.
        self.memory_bytes = memory_bytes if program.backend != "gpu" else None
        self._proc = None
        self._conn = None
        self.restarts = 0  # workers started after the first (each death or kill costs one)
        self._scratch: str | None = None
        self._started = False
        self._start_lock = threading.Lock()  # a start begun in another thread (start_beside) is waited for, not doubled

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """The live worker's process id (None when there is none)."""
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def start(self) -> Problem | None:
        """Start the worker now unless one is running (`run` starts one when needed)."""
        with self._start_lock:
            return self._start_held()

    def _start_held(self) -> Problem | None:
        if self._proc is not None and self._proc.is_alive():
            return None
        self.restarts += self._started
        self._started = True
        return self._start()

    def start_beside(self) -> threading.Thread:
        """Start the worker in a thread of ours and return that thread: its start-up (a process, numpy,
        the backend, launch.py) overlaps whatever the caller does next; a `run`, `call` or `close`
        meanwhile waits for this start (its lock is taken here, before the thread exists, and
        handed over), so no second process is made and none is left behind."""
        self._start_lock.acquire()

        def body() -> None:
            try:
                self._start_held()
            finally:
                self._start_lock.release()

        thread = threading.Thread(target=body, daemon=True, name="kata-worker-start")
        try:
            thread.start()
        except BaseException:
            self._start_lock.release()
            raise
        return thread

    def _start(self) -> Problem | None:
        from harness.sandbox import worker as _worker

        self._discard()
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        # The program (PTX, cubin: easily past a pipe's 64 KiB) goes over our pipe, not in spawn's
        # start-up data: Process.start() writes that data with no deadline while itself holding the
        # pipe's read end, so a child that died before reading all of it blocked start() forever.
        # Every temporary folder of the worker and its children (the plan's, kernel.py's scratch) lies
        # in this one, which _discard removes however the worker ended (a SIGKILL runs no cleanup).
        self._scratch = tempfile.mkdtemp(prefix="kata-worker-")
        proc = ctx.Process(target=_worker.main, args=(child, self.memory_bytes, self._scratch),
                           daemon=True, name="kata-worker")
        try:
            # One spawn at a time per process: _main_module_hidden edits the shared __main__.
            with _SPAWN_LOCK, _main_module_hidden():
                proc.start()
        except OSError as exc:
            # fork failing (no memory, too many processes) or the child dying before it read its
            # start-up data (BrokenPipeError): the grader's problem, reported, not raised.
            with contextlib.suppress(Exception):
                if proc.pid is not None:
                    proc.kill()
                    proc.join(_GRACE_S)
            parent.close()
            return Problem("internal", f"the worker process could not be started: {exc}")
        finally:
            child.close()
        self._proc, self._conn = proc, parent
        # Before "ready" only our code and launch.py's import run (whose errors come back as a
        # Problem), so a worker that dies or stalls here is the grader's problem, not the learner's.
        reply, problem = self._exchange(("program", self.program), self.startup_s, "starting (loading the backend and launch.py)")
        if problem is not None:
            if problem.kind == "timeout":
                return Problem("internal", f"the worker process did not start within {self.startup_s:.0f} s")
            return Problem("internal", problem.message)
        kind, payload = reply
        if kind != "ready":
            self._kill()
            return payload
        return None

    def run(self, spec: RunSpec) -> RunResult:
        problem = self.start()
        if problem is not None:
            return RunResult({}, (), problem=problem)
        # The plan's own alarm goes off first, so a stopped plan names its line (planner.py).
        spec = dataclasses.replace(spec, plan_timeout_s=max(self.timeout_s - 10.0, self.timeout_s * 0.8))
        result, problem = self._exchange(("run", spec), self.timeout_s, "running the case")
        if problem is not None:
            if problem.kind == "timeout":
                problem = Problem("timeout", f"the run took longer than {self.timeout_s:.0f} s and was "
                                  "stopped (an endless loop, or a spin-wait nothing releases)")
            return RunResult({}, (), problem=problem)
        if self.program.backend == "gpu" and result.problem is not None and result.problem.kind == "crash":
            self._kill()  # a crashed kernel leaves the CUDA context unusable: the next run starts afresh
        return result

    def call(self, target, timeout_s: float, **kwargs):
        """Run target(launch_fn=..., launch_file=..., **kwargs) in the worker (the GPU performance
        stage runs the learner's plan this way); returns (value, Problem | None). target: a
        function of an importable module (job_name), or its "module:function" name."""
        target = job_name(target)
        problem = self.start()
        if problem is not None:
            return None, problem
        reply, problem = self._exchange(("call", (target, kwargs)), timeout_s, f"running {target}")
        if problem is not None:
            if problem.kind == "timeout":
                problem = Problem("timeout", f"{target} took longer than {timeout_s:.0f} s and was stopped")
            return None, problem
        return reply

    def prefetch(self, target, *, beside_runs: bool = False, **kwargs) -> bool:
        """Ask the live worker to run target(**kwargs) (a function, as for call) in a background
        thread while the grader does something else (the GPU worker loads bench inputs while the
        CPU emulator runs the sanitizer). Non-blocking, no reply; the worker runs its next `run` only after it, and a
        `call` target waits for it with harness.sandbox.worker.wait_background(). beside_runs: the
        runs need not wait for it (work that prints nothing and leaves the GPU alone, such as an
        import started before the cases run). Returns whether the message was sent (False: no live
        worker; nothing is started for a prefetch)."""
        target = job_name(target)
        if self._proc is None or self._conn is None or not self._proc.is_alive():
            return False
        try:
            kind = "beside" if beside_runs else "prefetch"
            self._conn.send((kind, (target, kwargs)))  # small: fits the pipe, never blocks
        except Exception:  # a dead pipe, an unpicklable argument: no prefetch, the same grade
            return False
        return True

    def _exchange(self, message, timeout_s: float, doing: str):
        """Send `message` (None: send nothing) and receive the child's reply: (reply, None), or
        (None, Problem) when the child died, or did not answer within timeout_s (it is then killed).

        The blocking send/recv run in a helper thread so that the waiting here can watch the clock
        and the child's exit at once. A big input or result does not fit in the pipe, so either side
        blocks mid-message until the other reads; only a live child ever unblocks us."""
        from harness.sandbox import worker as _worker

        proc, conn, scratch = self._proc, self._conn, self._scratch
        box: dict = {}
        done = threading.Event()

        def transfer() -> None:
            try:
                if message is not None:
                    conn.send(message)
                spill = _worker.spill_folder(scratch) if scratch else None
                box["reply"] = wire.unpack(conn.recv_bytes(wire.MAX_BYTES), spill)  # data, never a pickle
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=transfer, daemon=True, name="kata-worker-pipe").start()
        deadline = time.monotonic() + timeout_s
        while not done.wait(min(_LIVENESS_S, max(0.0, deadline - time.monotonic()))):
            if proc.exitcode is not None:
                # Dead: a reply it finished writing (or the pipe's end-of-file) arrives at once,
                # unless someone else holds its end of the pipe; then only we can end the wait.
                if not done.wait(_GRACE_S):
                    self._release(conn)
                    done.wait(_GRACE_S)
                    return None, self._died(doing)
                break
            if time.monotonic() >= deadline:
                self._kill()
                self._release(conn)
                done.wait(_GRACE_S)
                return None, Problem("timeout", f"no answer within {timeout_s:.0f} s")
        if "reply" in box:
            return box["reply"], None
        if isinstance(box.get("error"), (EOFError, OSError)):
            return None, self._died(doing)
        if isinstance(box.get("error"), wire.MalformedReply):
            self._kill()
            return None, Problem("crash", f"malformed message from the worker process while {doing}: "
                                 f"{box['error']}; the run was stopped")
        self._kill()
        raise box["error"]  # pickling our own message failed: a bug of ours, with its traceback

    def interrupt(self) -> bool:
        """Kill the live worker process from a thread other than the one waiting on it (a GPU grade
        whose sanitizer failed stops the timing beside it): that thread's wait sees the death within
        _LIVENESS_S and returns its Problem; the bookkeeping stays that thread's. Returns whether a
        live process was killed."""
        proc = self._proc
        try:
            if proc is None or proc.exitcode is not None:
                return False
            proc.kill()
            return True
        except (OSError, ValueError, AttributeError):  # reaped and closed by the waiting thread meanwhile
            return False

    def _died(self, doing: str) -> Problem:
        proc = self._proc
        if proc is not None:
            proc.join(_GRACE_S)
            if proc.exitcode is None:  # closed its pipe but will not exit (e.g. stuck in teardown)
                proc.kill()
                proc.join(_GRACE_S)
        code = proc.exitcode if proc is not None else None
        self._discard()
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else "a signal"
            died = f"the worker process died ({name}, signal {-code}) while {doing}"
            if -code == signal.SIGKILL:
                return Problem("memory", f"{died}: most likely it ran out of memory (the system killed "
                               "it), or something else killed it")
            return Problem("crash", died)
        return Problem("crash", f"the worker process exited unexpectedly (exit code {code}) while {doing}")

    @staticmethod
    def _release(conn) -> None:
        """Wake a helper thread blocked on `conn` whose other end someone else keeps open: shutting
        the socket down ends its send or recv (closing the descriptor would not)."""
        with contextlib.suppress(OSError, ValueError):
            sock = socket.socket(fileno=os.dup(conn.fileno()))
            with sock:
                sock.shutdown(socket.SHUT_RDWR)

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._proc.kill()
            self._proc.join(_GRACE_S)
        self._discard()

    def _discard(self) -> None:
        """Forget the (dead) worker: reap it if it has exited, close our end of its pipe, remove its
        temporary files (once it has exited: a live one may still write there)."""
        if self._proc is not None and self._proc.exitcode is not None:
            self._proc.close()
            if self._scratch:
                shutil.rmtree(self._scratch, ignore_errors=True)
        self._proc = None
        if self._conn is not None:
            with contextlib.suppress(OSError):
                self._conn.close()
            self._conn = None

    def close(self) -> None:
        with self._start_lock:  # a start still under way in another thread ends first, then is stopped
            if self._proc is not None and self._proc.is_alive():
                # "stop" has no reply: the exchange ends when the child closes the pipe by exiting.
                self._exchange(("stop", None), 2.0, "stopping")
            self._kill()


def job_name(target) -> str:
    """How a job travels to the worker: its "module:function" name. The caller names the function
    itself, so a reader (and a tool) follows the call to it; the worker imports it by that name."""
    if isinstance(target, str):
        return target
    return f"{target.__module__}:{target.__qualname__}"


@contextlib.contextmanager
def _main_module_hidden():
    """Spawn re-imports the parent's __main__ in the child; ours may be a console script, pytest,
    or stdin. The worker needs none of it, so the child is told there is none."""
    main = sys.modules.get("__main__")
    saved = {k: main.__dict__[k] for k in ("__file__", "__spec__") if main is not None and k in main.__dict__}
    try:
        for k in saved:
            if k == "__spec__":
                main.__spec__ = None
            else:
                del main.__dict__[k]
        yield
    finally:
        if main is not None:
            main.__dict__.update(saved)
