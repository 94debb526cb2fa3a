"""`kata bench DIR --backend cpu`: the H200 model's estimates at the bench shapes, without a GPU.

Unlike a grade, the kernel need not pass every small edge case first: it is checked once, at the
bench shape scaled down (the dimensions the kata names halved until the case is small enough to
emulate whole, so a kernel written for multiples of its tile still meets multiples of its tile),
and then estimated. Every number is labelled an estimate for the named GPU.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

from grader.performance.model import LABEL, h200

CHECK_ELEMENTS = 1 << 18  # the scaled-down check case emulates whole in a few seconds


def check_case(kata, case: dict) -> dict:
    """The bench case with the kata's `check_halve` dimensions halved (in turn) until its largest
    array holds at most CHECK_ELEMENTS elements."""
    from grader.catalog import evaluate

    lib = h200.entry(kata)
    names = lib.get("check_halve") or [k for k, v in case.items() if isinstance(v, int) and v > 1]
    params = dict(case)
    env_extra = {a.name: 1 for a in kata.args if a.role == "scalar" and a.name not in params}

    def elements(p):
        largest = 0
        for a in kata.arrays:
            try:
                n = 1
                for d in a.shape:
                    n *= int(evaluate(d, {**env_extra, **p, "nnz": p.get("m", 1) * p.get("avg", 1)}))
                largest = max(largest, n)
            except (KeyError, ValueError, TypeError):
                continue
        return largest

    i = 0
    while elements(params) > CHECK_ELEMENTS and any(params.get(n, 1) > 1 for n in names):
        name = names[i % len(names)]
        if params.get(name, 1) > 1:
            params[name] = max(1, params[name] // 2)
        i += 1
    return params


def bench_row(kata, folder: Path, label: str, seed: int = 0) -> dict:
    """One submission's estimates (a JSON-ready row; the learner's errors land in 'error')."""
    from grader.grading import cases as _cases
    from grader.grading.runs import run_case
    from grader.grading.workspace import locate
    from grader.performance.bench import to_json
    from grader.performance.model.stage import estimate_stage
    from harness.frontends import nvrtc
    from harness.sandbox.isolation import Program, Worker

    row = {"kata": kata.id, "submission": label, "metric": kata.bench.metric, "backend": "cpu", "label": LABEL}
    try:
        sub = locate(folder, kata.id)
        compiled = nvrtc.compile(sub.kernel.read_text(), sub.kernel.name, cubin=True)
    except Exception as exc:
        return {**row, "error": f"{type(exc).__name__}: {exc}"}
    if not compiled.ok:
        return {**row, "error": "compile error: " + "; ".join(d.message for d in compiled.errors[:2])}
    program = Program("cpu", compiled.ptx, compiled.cubin, sub.kernel.name, str(sub.launch.resolve()))
    with contextlib.ExitStack() as stack:
        worker = stack.enter_context(Worker(program, timeout_s=300.0, memory_bytes=8 << 30))
        check = check_case(kata, dict(kata.bench.cases[0]))
        data = _cases.materialize(kata, _cases.Case(check, "requested", seed))
        outcome, _ = run_case(kata, worker, data)
        row["check"] = {"case": check, "ok": not outcome.failed,
                        "headline": (outcome.check.headline() if outcome.check is not None else
                                     outcome.problem.message if outcome.problem is not None else outcome.reason)}
        if outcome.failed:
            return {**row, "error": f"wrong at {check} (the bench shape scaled down): {row['check']['headline']}"}
        est, occupancy, note = estimate_stage(kata, worker, compiled, sub.kernel.name, seed)
    if est is None:
        return {**row, "error": note or "no estimate for this kata"}
    row["cases"] = [{"case": c.case, "estimated_s": c.seconds, "score": c.score, "bound": c.bound, "how": c.how,
                     "lines": [list(x) for x in c.lines], "advice": c.advice, "utilisation": c.utilisation,
                     "library_s": c.library_s, "method": c.method, "expected_error": c.expected_error,
                     "floor_s": c.floor_s, "defect": c.defect, "no_estimate": c.no_estimate} for c in est.cases]
    row["summary"] = {"value": est.value, "library_value": est.library_value, "tier": est.tier,
                      "constants": est.constants}
    row["occupancy"] = to_json(occupancy)
    return row


def table_rows(rows: list[dict]) -> list[list[str]]:
    out = []
    for r in rows:
        if r.get("error"):
            out.append([r["kata"], r["submission"], "-", "-", "-", "-", "error: " + r["error"][:70]])
            continue
        fmt = (lambda v: f"{v:.0%}") if r["metric"] == "roofline" else (lambda v: f"{v:.2f}")
        for c in r["cases"]:
            time = f"{'>=' if c.get('method') == 'incomplete' else '~'}{c['estimated_s'] * 1e3:.3f} ms"
            out.append([r["kata"], r["submission"], " ".join(f"{k}={v}" for k, v in c["case"].items()),
                        time, "-" if c["score"] is None else fmt(c["score"]), r["summary"]["tier"] or "-",
                        c["bound"]])
    return out


HEAD = ["kata", "submission", "case", "estimated (H200 model)", "score", "tier", "bound"]


def markdown(rows: list[dict]) -> str:
    lines = [f"{LABEL}", "", "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines) + "\n"
