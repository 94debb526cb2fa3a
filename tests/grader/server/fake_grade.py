"""A stand-in for the grading pipeline in the server's tests (the server runs it in its grading
process, by name, as `--grade-function tests.grader.server.fake_grade:grade`).

The kernel's text decides: "CORRECT" passes the public tests, and the hidden ones unless it says
"PUBLIC_ONLY" (then it fails on the last hidden case the server gives it: the interviewer's own,
where the assignment has some); "SLOW" makes the grade take 4 s.
"""
from __future__ import annotations

import time
from pathlib import Path

from grader.results import CaseFailure, CompileStage, CorrectnessStage, GradeReport

HIDDEN_N = 16777217  # the hidden n where the kata's catalogue gives none


def grade(kata_id, folder, *, backend, hidden, seed=None, hidden_cases=()):
    text = (Path(folder) / "kernel.cu").read_text()
    if "SLOW" in text:
        time.sleep(4.0)
    fails_public = "CORRECT" not in text
    fails_hidden = hidden and "PUBLIC_ONLY" in text
    ok = not fails_public and not fails_hidden
    hidden_n = (tuple(hidden_cases) or ({"n": HIDDEN_N},))[-1].get("n", HIDDEN_N)
    n, origin = (257, "public") if fails_public else (hidden_n, "hidden")
    failure = None if ok else CaseFailure({"n": n}, origin, "wrong-answer", ("wrong-answer",),
                                          f"fails for n = {n}: out[{n - 1}] = 0, expected 1",
                                          (f"out[{n - 1}] = 0, expected 1",), 1, None,
                                          f"kata grade {kata_id} --backend cpu --case n={n} --seed {seed}")
    ran_hidden = len(hidden_cases) if hidden and not fails_public else 0
    correctness = CorrectnessStage(ok, 14 + ran_hidden, 14, 0, ran_hidden, seed or 0, 0, failure)
    return GradeReport(kata=kata_id, title=kata_id, workspace=str(folder), backend="cpu",
                       backend_reason="test", seed=seed or 0, verdict="pass" if ok else "fail",
                       stage="done" if ok else "correctness", headline="passed" if ok else failure.headline,
                       reasons=() if ok else ("wrong-answer",), compile=CompileStage(True, (), ""),
                       correctness=correctness)
