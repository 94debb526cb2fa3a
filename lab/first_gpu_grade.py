"""A kata's first GPU grade on a fresh machine, and its second: the 10 s goal of issue 13.

    python lab/first_gpu_grade.py [KATA ...] [--out DIR] [--timeout 240] [--budget 500]

Needs a CUDA GPU that CuPy sees; without one it says so and exits 2 at once. The machine's
calibration (`kata calibrate`) is measured once into a scratch KATA_HOME and copied into each
kata's fresh KATA_HOME, so "first" is a kata's first grade on a calibrated machine: empty compile
and bench-input caches. Each kata is graded twice with `python -m grader grade solutions/ID --kata
ID --backend gpu --json` in a subprocess: "first" with the empty caches, "second" with what the
first left. Writes first-gpu-grade.md (the table, with the performance stage's phases) and
first-gpu-grade.json into DIR (default $OUT, else lab/results), rewritten after every kata, so
a call cut short still leaves the katas done; katas not reached within --budget are listed.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOAL_S = 10.0


def gpu_present() -> tuple[bool, str]:
    """Asked in a subprocess with a timeout: a broken driver must not hang this script."""
    code = "from harness.backends import gpu; print('yes' if gpu.available() else 'no')"
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    except subprocess.TimeoutExpired:
        return False, "asking CuPy for a GPU took over 120 s"
    if proc.stdout.strip() == "yes":
        return True, ""
    why = (proc.stderr.strip().splitlines() or ["CuPy sees no CUDA GPU"])[-1]
    return False, why


def grade(kata_id: str, home: Path, timeout: float, backend: str = "gpu") -> dict:
    env = dict(os.environ, KATA_HOME=str(home))
    cmd = [sys.executable, "-m", "grader", "grade", f"solutions/{kata_id}", "--kata", kata_id,
           "--backend", backend, "--json"]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(wall=time.perf_counter() - t0, verdict="timeout", headline=f"over {timeout:.0f} s", phases={})
    wall = time.perf_counter() - t0
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return dict(wall=wall, verdict=f"error (exit {proc.returncode})", headline=tail[0], phases={})
    perf = report.get("performance") or {}
    return dict(wall=wall, verdict=report.get("verdict", "?"), headline=report.get("headline", ""),
                phases=perf.get("phases") or {}, data_s=perf.get("data_s"))


def _phases(p: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in sorted(p.items(), key=lambda kv: -kv[1]) if v >= 0.1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("katas", nargs="*")
    ap.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else ROOT / "lab" / "results")
    ap.add_argument("--timeout", type=float, default=240.0, help="per grade")
    ap.add_argument("--budget", type=float, default=500.0,
                    help="start no kata after this many seconds (a device call has 600 s); the table so far stays")
    ap.add_argument("--backend", default="gpu", help="cpu: try this script's plumbing without a GPU")
    args = ap.parse_args(argv)
    ok, why = gpu_present() if args.backend == "gpu" else (True, "")
    if not ok:
        print(f"first_gpu_grade: no GPU to grade on ({why}). Run this on a machine whose GPU CuPy sees "
              "(pip install -e '.[gpu]'); on the CPU, lab/grade_times.py measures CPU grades.", file=sys.stderr)
        return 2
    from grader import catalog

    ids = args.katas or catalog.ids()
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="kata-first-gpu-"))
    t0 = time.perf_counter()
    cal = subprocess.run([sys.executable, "-m", "grader", "calibrate"], cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, KATA_HOME=str(scratch / "calibrated")), timeout=args.timeout)
    calibrate_s = time.perf_counter() - t0
    calibration = scratch / "calibrated" / "calibration.json"
    rows, results, over, skipped = [], {}, [], []
    started = datetime.datetime.now(datetime.timezone.utc)
    head = [f"# A kata's first {args.backend.upper()} grade on a fresh (calibrated) machine, and its second", "",
            f"- command: `python lab/first_gpu_grade.py {' '.join(argv if argv is not None else sys.argv[1:])}`".rstrip(),
            f"- date: {started:%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores",
            f"- `kata calibrate` once first: {calibrate_s:.1f} s (exit {cal.returncode}), copied into each fresh KATA_HOME",
            f"- goal: first grade at most {GOAL_S:.0f} s", "",
            "| kata | verdict | first s | second s | first: performance phases (s) | second: phases (s) |",
            "|---|---|---|---|---|---|"]
    for kata_id in ids:
        if time.perf_counter() - t0 > args.budget:
            skipped.append(kata_id)
            continue
        home = scratch / kata_id
        home.mkdir()
        if calibration.exists():
            shutil.copy(calibration, home / "calibration.json")
        first = grade(kata_id, home, args.timeout, args.backend)
        second = grade(kata_id, home, args.timeout, args.backend)
        shutil.rmtree(home, ignore_errors=True)  # bench inputs take GBs
        results[kata_id] = dict(first=first, second=second)
        if first["wall"] > GOAL_S or first["verdict"] != "pass":
            over.append(kata_id)
        row = (f"| {kata_id} | {first['verdict']} | {first['wall']:.1f} | {second['wall']:.1f} | "
               f"{_phases(first['phases'])} | {_phases(second['phases'])} |")
        rows.append(row)
        print(row, flush=True)
        tail = ["", f"First grade over {GOAL_S:.0f} s (or not passing): {', '.join(over) if over else 'none'}"]
        if skipped or kata_id != ids[-1]:
            tail.append(f"Not measured (yet, or over --budget {args.budget:.0f} s): "
                        + ", ".join(skipped + ids[ids.index(kata_id) + 1:]))
        (args.out / "first-gpu-grade.md").write_text("\n".join(head + rows + tail + [""]))
        (args.out / "first-gpu-grade.json").write_text(json.dumps(results, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)
    print((args.out / "first-gpu-grade.md").read_text().split("\n\n")[-1] if rows else "nothing measured")
    return 0

if __name__ == "__main__":
    sys.exit(main())
