"""The same jobs dispatched with Ray: a local Ray cluster on this machine (ray.init with declared
resources), each job a `ray.remote(num_gpus=1)` task that grades in its own process. The GPUs are
declared, not real: Ray only schedules by them (and sets CUDA_VISIBLE_DEVICES); the stand-in
grader needs none."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from grader.server import jobs
from grader.server.models import Submission
from tests.grader.server.conftest import FAKE, make_assignment

ray = pytest.importorskip("ray", reason="ray is not installed (pip install ray)")


@pytest.fixture(scope="module")
def local_ray():
    # Ray's workers import the stand-in grader (tests.grader.server.fake_grade) from the checkout
    root = str(Path(__file__).resolve().parents[3])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=2, num_gpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def test_ray_grades_every_job_on_a_gpu_slot(db, local_ray):
    from grader.server.pool import PoolConfig, RayPool

    _, invited = make_assignment(db, names=("ada", "bob", "cy"), backend="gpu")
    ids = []
    for candidate, _ in invited:
        with db.session() as s, s.begin():
            ids.append(jobs.enqueue(s, candidate.id, "vector-add", {"kernel.cu": "// CORRECT"}, time.time()).id)
    pool = RayPool(db, PoolConfig(2, "gpu", dispatch="ray", grade_function=FAKE, ray_gpus_per_job=1, poll_s=0.1))
    pool.start()
    try:
        end = time.time() + 120
        while time.time() < end:
            with db.session() as s:
                states = [s.get(Submission, i).state for i in ids]
            if all(state == "done" for state in states):
                break
            time.sleep(0.2)
    finally:
        pool.close()
    with db.session() as s:
        rows = [s.get(Submission, i) for i in ids]
    assert [r.outcome["verdict"] for r in rows] == ["pass"] * 3
    assert all(r.worker.endswith(":ray") and r.tries == 1 for r in rows)
