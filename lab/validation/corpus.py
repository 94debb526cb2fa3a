"""The validation corpus: listing its kernels and grading them on the CPU, with a cache.

    python lab/validation/corpus.py [--only KATA ...] [--jobs 1]   # grade what is not cached yet, print verdicts

Every folder lab/validation/<kata>/<design>/ holds kernel.cu + launch.py (a design's one-line
description is the comment at the top of kernel.cu). A grade is `python -m grader grade DIR --kata
KATA --backend cpu --json`; its JSON is kept under the cache folder, keyed by the kernel's files
and the performance model's files, so a new model (or an edited kernel) grades again.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_CACHE = HERE / ".grades"  # git-ignored: machine-local results
MODEL_DIRS = ("grader/performance/model",)  # the H200 model: a new one grades again (`--fresh` for anything else)


def corpus(only=()) -> list[tuple[str, str, Path]]:
    """(kata, design, folder) of every corpus kernel, sorted."""
    out = []
    for kernel in sorted(HERE.glob("*/*/kernel.cu")):
        folder = kernel.parent
        kata = folder.parent.name
        if only and kata not in only and f"{kata}/{folder.name}" not in only:
            continue
        out.append((kata, folder.name, folder))
    return out


def design_note(folder: Path) -> str:
    """The first comment line of kernel.cu, without its 'Design:' prefix."""
    for line in (folder / "kernel.cu").read_text().splitlines():
        line = line.strip()
        if line.startswith("//"):
            return line.lstrip("/ ").removeprefix("Design:").strip()
    return ""


def _digest(paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(str(p.relative_to(ROOT)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def model_digest() -> str:
    files = sorted(f for d in MODEL_DIRS for f in (ROOT / d).rglob("*") if f.is_file() and f.suffix in (".py", ".json"))
    return _digest(files)


def grade_key(folder: Path, model: str) -> str:
    return f"{folder.parent.name}__{folder.name}__{_digest([folder / 'kernel.cu', folder / 'launch.py'])}__{model}"


def grade(kata: str, folder: Path, cache: Path, model: str, timeout_s: float = 1800.0, fresh: bool = False) -> dict:
    """The grade's JSON (cached unless fresh), plus 'grade_wall_s'; {'verdict': 'error', ...} when the
    grader failed."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{grade_key(folder, model)}.json"
    if path.is_file() and not fresh:
        return json.loads(path.read_text())
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "grader", "grade", str(folder), "--kata", kata, "--backend", "cpu", "--json"]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s)
        doc = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {
            "verdict": "error", "headline": (proc.stderr or proc.stdout)[-2000:]}
    except subprocess.TimeoutExpired:
        doc = {"verdict": "error", "headline": f"grade took longer than {timeout_s:.0f} s"}
    doc["grade_wall_s"] = round(time.monotonic() - t0, 1)
    # the emulator's watchdog is wall-clock time: a stop under another user's load is not a verdict to keep
    if doc.get("verdict") != "error" and "watchdog" not in str(doc.get("headline", "")):
        path.write_text(json.dumps(doc))
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=[], help="katas or kata/design to grade")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="grade again even where a cached grade exists")
    args = ap.parse_args(argv)
    entries = corpus(args.only)
    if args.list:
        for kata, design, folder in entries:
            print(f"{kata:20s} {design:34s} {design_note(folder)}")
        print(len(entries), "kernels")
        return 0
    model = model_digest()
    bad = 0
    for kata, design, folder in entries:
        doc = grade(kata, folder, args.cache, model, fresh=args.fresh)
        verdict = doc.get("verdict")
        bad += verdict != "pass"
        est = doc.get("estimate") or {}
        secs = " ".join(f"{c.get('seconds') or 0:.3g}" for c in est.get("cases", []))
        print(f"{verdict:6s} {kata}/{design}  {doc.get('grade_wall_s')} s  est {secs}"
              + ("" if verdict == "pass" else f"  {str(doc.get('headline', ''))[:300]}"), flush=True)
    print(f"{len(entries) - bad}/{len(entries)} pass")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
