"""Grade every solution and wrong kernel with NVRTC and with clang; list where they differ.

    python lab/compare_frontends.py [ID ...] [--out FILE.md] [--examples N]

Needs both front ends (Linux: NVRTC from `pip install kata`, clang from `pip install ziglang` and
`kata setup`). Compared per kernel: verdict, reasons, the stage, the first finding's kind and
line, and the compile errors' lines. Prints a table and exits 1 when a kernel differs.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def summary(report) -> dict:
    """What a learner sees of a grade, reduced to what two front ends must agree on."""
    first = next((f for f in report.findings if f.severity == "error"), None)
    errors = [d.line for d in report.compile.diagnostics if d.severity == "error"] if report.compile else []
    return {"verdict": report.verdict, "stage": report.stage, "reasons": tuple(report.reasons),
            "finding": (first.kind, first.file, first.line) if first else None, "compile_lines": tuple(errors[:1])}


def grade_with(frontend: str, kata_id: str, folder: Path, examples: int | None, hidden: bool = False):
    from grader import pipeline

    old = os.environ.get("KATA_FRONTEND")
    os.environ["KATA_FRONTEND"] = frontend
    try:
        return pipeline.grade(kata_id, folder, backend="cpu", examples=examples, hidden=hidden)
    finally:
        if old is None:
            os.environ.pop("KATA_FRONTEND", None)
        else:
            os.environ["KATA_FRONTEND"] = old


def kernels(kata_ids):
    """(kata, name, folder factory) for each solution and wrong kernel."""
    from grader import catalog
    from grader.catalog import wrong

    for kid in kata_ids:
        kata = catalog.load(kid)
        yield kid, "solution", lambda tmp, k=kata: k.solution_dir
        for m in wrong.mistakes(kid, kata.solution_dir):
            yield kid, m.name, lambda tmp, k=kid, n=m.name: wrong.materialise(k, n, Path(tmp) / n)


def main(argv=None) -> int:
    from grader import catalog

    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--examples", type=int, default=None)
    args = ap.parse_args(argv)
    rows, differ = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for kid, name, make in kernels(args.ids or catalog.ids()):
            folder = make(tmp)
            got, secs = {}, {}
            for fe in ("nvrtc", "clang"):
                t = time.perf_counter()
                got[fe] = summary(grade_with(fe, kid, folder, args.examples))
                secs[fe] = time.perf_counter() - t
            same = got["nvrtc"] == got["clang"]
            differ += not same
            diff = "" if same else "; ".join(f"{k}: {got['nvrtc'][k]} vs {got['clang'][k]}"
                                             for k in got["nvrtc"] if got["nvrtc"][k] != got["clang"][k])
            rows.append(f"| {kid} | {name} | {got['nvrtc']['verdict']} {','.join(got['nvrtc']['reasons'])} | "
                        f"{'same' if same else 'DIFFERS: ' + diff} | {secs['nvrtc']:.1f} | {secs['clang']:.1f} |")
            print(rows[-1], flush=True)
    text = ("| kata | kernel | NVRTC verdict, reasons | clang | s (NVRTC) | s (clang) |\n|---|---|---|---|---|---|\n"
            + "\n".join(rows) + f"\n\n{len(rows)} kernels, {differ} differ\n")
    if args.out:
        args.out.write_text(text)
    print(f"{len(rows)} kernels, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
