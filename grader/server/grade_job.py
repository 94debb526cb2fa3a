"""One grade in its own process: `python -m grader.server.grade_job JOB.json OUTCOME.json`.

The pool (pool.py) starts one such process per job, so a grade that crashes, hangs or is killed ends
this process only, never the server; the learner's launch plan runs further down, in the pipeline's
own sandboxed worker. The job's files are written to a fresh folder, graded with the hidden tests
drawn from the assignment's secret seed (hidden_suite; the same pipeline as `kata interview submit`),
and the KataOutcome is written as JSON, with "verdict" added. A private kata's files come in the job,
so a Ray worker on another host grades it too.
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
import traceback
from pathlib import Path


def grade(job: dict) -> dict:
    from grader.errors import KataError
    from grader.practice.interview_report import outcome_from
    from grader.server.jobs import error_outcome

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="kata-serve-") as folder:
        if job.get("kata_files"):  # a private kata: only the server has it, so the job carries it
            from grader import catalog
            from grader.server.private_katas import write_files

            write_files(Path(folder) / "katas" / job["kata"], job["kata_files"])
            catalog.add_root(Path(folder) / "katas")
        workspace = Path(folder) / job["kata"]
        workspace.mkdir()
        for name, text in job["files"].items():
            (workspace / name).write_text(text)
        (workspace / ".kata").write_text(f'kata = "{job["kata"]}"\n')
        try:
            cases = hidden_suite(job["kata"], int(job["seed"]), [dict(c) for c in job.get("extra_cases") or ()])
            report = _grade_function(job)(job["kata"], workspace, backend=job["backend"], hidden=True,
                                          seed=int(job["seed"]), hidden_cases=cases)
        except KataError as exc:  # e.g. no kernel file: the candidate's upload, graded as an error
            return error_outcome(job["kata"], exc.message)
        outcome = outcome_from(job["kata"], report, attempts=0, hints=0, time_used_s=0.0)
    data = outcome.to_dict()
    data.update(verdict=outcome.verdict, grade_s=round(time.time() - started, 3))
    return data


def hidden_suite(kata_id: str, seed: int, extra: list[dict]) -> tuple[dict, ...]:
    """The hidden cases a server grades with, in order: drawn from the assignment's secret seed (the
    decisive ones: nobody outside the server can know them), then the kata's own from kata.toml (a
    floor: an open kata's are public), then the interviewer's own for this assignment."""
    from grader import catalog
    from grader.grading import secret_cases

    kata = catalog.load(kata_id)
    return (*secret_cases.draw(kata, seed), *kata.hidden, *extra)


def _grade_function(job: dict):
    """The pipeline; a server started for tests may name a stand-in ("module:function")."""
    if job.get("grade_function"):
        import importlib

        module, _, name = job["grade_function"].partition(":")
        return getattr(importlib.import_module(module), name)
    from grader import pipeline

    def real(kata, folder, *, backend, hidden, seed, hidden_cases):
        return pipeline.grade(kata, folder, backend=backend, hidden=hidden, seed=seed, hidden_cases=hidden_cases,
                              require_sandbox=True, with_estimate=job.get("estimate", True))

    return real


def main(argv: list[str]) -> int:
    job = json.loads(Path(argv[0]).read_text())
    try:
        outcome = grade(job)
    except Exception:  # a bug of ours: the traceback goes to the server's log, not to the candidate
        traceback.print_exc()
        return 4
    tmp = Path(argv[1] + ".tmp")
    tmp.write_text(json.dumps(outcome))
    tmp.replace(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
