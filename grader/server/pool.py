"""Who grades the queue: a local pool (one slot per GPU, or per group of CPU cores), or a Ray cluster
(`ray.remote(num_gpus=...)`, one task per job). Either way each job is graded by a fresh
`grader.server.grade_job` process: never in the server's process, and a crash ends one job only.

A slot's thread claims a job, starts the process, renews the job's lease while it runs, and stores the
outcome; a process that dies (SIGKILL included) sends the job back to the queue (jobs.release), and a
server that dies leaves leases that expire, so the next server requeues the job (jobs.requeue_stale).
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.server import jobs
from grader.server.database import Database

log = logging.getLogger("kata.serve")
JOB_TIMEOUT_S = 1200.0  # a grade that runs longer is killed and retried (the pipeline's own limits are lower)


@dataclass(frozen=True)
class PoolConfig:
    workers: int  # slots (local) or concurrent tasks (Ray)
    backend: str  # cpu | gpu | auto: what the slots are sized for
    cpu_groups: tuple[tuple[int, ...], ...] = ()  # local CPU slots: the cores each is pinned to
    gpus: tuple[int, ...] = ()  # local GPU slots: the device each sees
    dispatch: str = "local"  # local | ray
    ray_address: str | None = None  # None: start a local Ray cluster
    ray_gpus_per_job: float = 1.0
    grade_function: str | None = None  # tests: a stand-in for the pipeline ("module:function")
    estimate: bool = True  # CPU: the H200 estimate on a pass (off for load tests of the server itself)
    poll_s: float = 0.5
    extra_env: dict = field(default_factory=dict)


def plan(workers: int | None, backend: str, cores_per_worker: int = 2) -> PoolConfig:
    """One slot per GPU on the GPU backend, else one per group of `cores_per_worker` cores."""
    if backend == "gpu":
        count = _gpu_count()
        n = workers or max(1, count)
        return PoolConfig(n, backend, gpus=tuple(i % max(1, count) for i in range(n)))
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    n = workers or max(1, len(cores) // max(1, cores_per_worker))
    size = max(1, len(cores) // n)
    groups = tuple(tuple(cores[(i * size + j) % len(cores)] for j in range(size)) for i in range(n))
    return PoolConfig(n, backend, cpu_groups=groups)


def _gpu_count() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def job_payload(job: jobs.Job, config: PoolConfig) -> dict:
    data = asdict(job)
    data.update(grade_function=config.grade_function, estimate=config.estimate,
                backend=job.backend if job.backend != "auto" else config.backend)
    return data


def run_isolated(payload: dict, env: dict, on_start=None, keep_going=None,
                 cpus: tuple[int, ...] = ()) -> tuple[int, dict | None, str]:
    """Grade one job in a fresh process: (exit code, outcome or None, the log's tail).
    on_start(pid) is called once it runs; keep_going() is polled and False kills it."""
    with tempfile.TemporaryDirectory(prefix="kata-job-") as folder:
        job_file, out_file, log_file = (Path(folder) / n for n in ("job.json", "outcome.json", "log"))
        job_file.write_text(json.dumps(payload))
        with open(log_file, "wb") as log_out:
            proc = subprocess.Popen([sys.executable, "-m", "grader.server.grade_job", str(job_file), str(out_file)],
                                    stdin=subprocess.DEVNULL, stdout=log_out, stderr=subprocess.STDOUT,
                                    env=env, cwd=folder, start_new_session=True)
        if cpus and hasattr(os, "sched_setaffinity"):
            # Pinned from here (no preexec_fn: unsafe beside the server's threads) before it imports
            # anything heavy; the pipeline's own workers inherit the group.
            with contextlib.suppress(OSError):
                os.sched_setaffinity(proc.pid, cpus)
        if on_start:
            on_start(proc.pid)
        deadline = time.time() + JOB_TIMEOUT_S
        while True:
            try:
                rc = proc.wait(timeout=2.0)
                break
            except subprocess.TimeoutExpired:
                if time.time() > deadline or (keep_going and not keep_going()):
                    _kill_group(proc.pid)
        _kill_group(proc.pid)  # the pipeline's own workers, if the grade died before reaping them
        outcome = json.loads(out_file.read_text()) if rc == 0 and out_file.is_file() else None
        tail = log_file.read_bytes()[-2000:].decode(errors="replace")
    return rc, outcome, tail


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _settle(db: Database, job: jobs.Job, worker: str, rc: int, outcome: dict | None, tail: str) -> None:
    if outcome is not None:
        jobs.finish(db, job, worker, outcome)
    elif rc == 4:  # a bug of ours in the grade: retrying gives the same; the log keeps the traceback
        log.error("grading submission %s failed:\n%s", job.submission, tail)
        jobs.finish(db, job, worker, jobs.error_outcome(job.kata, "kata could not grade this upload "
                                                       "(a bug in kata); the server's log has the details"),
                    state="error")
    else:
        log.warning("grading process for submission %s ended with %s; requeued", job.submission, rc)
        jobs.release(db, job, worker, f"grading process ended with exit code {rc}")


class LocalPool:
    """Slot threads on this machine, each running one grading process at a time."""

    def __init__(self, db: Database, config: PoolConfig):
        self.db, self.config = db, config
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.name = f"{socket.gethostname()}:{os.getpid()}"

    def start(self) -> None:
        jobs.requeue_stale(self.db)
        for slot in range(self.config.workers):
            thread = threading.Thread(target=self._slot, args=(slot,), name=f"kata-slot-{slot}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=5)

    def _env(self, slot: int) -> dict:
        env = {**os.environ, **self.config.extra_env}
        if self.config.gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(self.config.gpus[slot])
        return env

    def _slot(self, slot: int) -> None:
        worker = f"{self.name}:{slot}"
        cpus = self.config.cpu_groups[slot] if self.config.cpu_groups else ()
        last_sweep = 0.0
        while not self.stop.is_set():
            try:
                if time.time() - last_sweep > jobs.LEASE_S / 3:
                    jobs.requeue_stale(self.db)
                    last_sweep = time.time()
                job = jobs.claim(self.db, worker)
                if job is None:
                    self.stop.wait(self.config.poll_s)
                    continue
                renewed = [time.time()]

                def keep_going(job=job, renewed=renewed):
                    if self.stop.is_set():
                        return False
                    if time.time() - renewed[0] > jobs.LEASE_S / 3:
                        renewed[0] = time.time()
                        return jobs.renew(self.db, job, worker)
                    return True

                rc, outcome, tail = run_isolated(job_payload(job, self.config), self._env(slot),
                                                 on_start=lambda pid, job=job: jobs.started(self.db, job, worker, pid),
                                                 keep_going=keep_going, cpus=cpus)
                if self.stop.is_set() and outcome is None:
                    # Shutting down: back to the queue now, so the next start grades it at once (a
                    # server killed outright leaves a lease that expires instead).
                    jobs.release(self.db, job, worker, "the server stopped during the grade")
                    return
                _settle(self.db, job, worker, rc, outcome, tail)
            except Exception:  # the database went away for a moment: log, wait, carry on
                log.exception("grading slot %s", worker)
                self.stop.wait(2.0)


def _ray_grade(payload: dict, env_extra: dict) -> tuple[int, dict | None, str]:
    """A Ray task: the same isolated grading process, on whichever node Ray chose."""
    env = {**os.environ, **env_extra}
    return run_isolated(payload, env)


class RayPool:
    """Jobs dispatched to a Ray cluster: each a task asking for `ray_gpus_per_job` GPUs on the GPU
    backend (Ray sets CUDA_VISIBLE_DEVICES for it), or one CPU. The database stays on the server:
    this thread claims, renews leases and stores outcomes."""

    def __init__(self, db: Database, config: PoolConfig):
        self.db, self.config = db, config
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.worker = f"{socket.gethostname()}:{os.getpid()}:ray"

    def start(self) -> None:
        import ray

        if not ray.is_initialized():
            ray.init(address=self.config.ray_address, include_dashboard=False, log_to_driver=False)
        gpus = self.config.ray_gpus_per_job if self.config.backend == "gpu" else 0
        self.remote = ray.remote(num_gpus=gpus, num_cpus=1, max_retries=0)(_ray_grade)
        jobs.requeue_stale(self.db)
        self.thread = threading.Thread(target=self._dispatch, name="kata-ray", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        if self.thread:
            self.thread.join(timeout=10)

    def _dispatch(self) -> None:
        import ray

        running: dict = {}  # ObjectRef -> Job
        last_renew = time.time()
        while not self.stop.is_set():
            try:
                while len(running) < self.config.workers:
                    job = jobs.claim(self.db, self.worker)
                    if job is None:
                        break
                    running[self.remote.remote(job_payload(job, self.config), self.config.extra_env)] = job
                if not running:
                    self.stop.wait(self.config.poll_s)
                    jobs.requeue_stale(self.db)
                    continue
                done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
                for ref in done:
                    job = running.pop(ref)
                    try:
                        rc, outcome, tail = ray.get(ref)
                    except Exception as exc:  # the Ray worker died (a node lost, a kill -9)
                        rc, outcome, tail = -9, None, str(exc)[-2000:]
                    _settle(self.db, job, self.worker, rc, outcome, tail)
                if time.time() - last_renew > jobs.LEASE_S / 3:
                    for job in running.values():
                        jobs.renew(self.db, job, self.worker)
                    last_renew = time.time()
            except Exception:
                log.exception("Ray dispatcher")
                self.stop.wait(2.0)
