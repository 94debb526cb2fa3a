"""Wall time of a CPU grade of every kata's solution (the 10 s goal of a CPU grade on 2 cores).

    python lab/grade_times.py [KATA ...] [--folder DIR:KATA ...] [--write lab/results/grade-times.md]

Each grade runs `python lab/grade_phases.py FOLDER --kata ID --backend cpu` (the grade that
`kata grade --json` runs, with its steps timed) in its own subprocess with a fresh KATA_HOME (a temporary folder): "cold" is that first grade (NVRTC compiles,
nothing cached), "warm" a second grade with the same KATA_HOME (the compile cache filled). CPU
seconds (user + sys of the grade and its workers) are printed beside the wall time because the
machine may be shared: the 1-minute load average at start and end says how much to trust wall time.
The phases column is the cold grade's breakdown (lab/grade_phases.py; on a GPU grade also the
report's own `performance.phases`).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 10.0


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def grade_once(folder: Path, kata_id: str, home: Path, backend: str = "cpu", timeout: float = 600.0) -> dict:
    """One grade in a subprocess: {wall, cpu, verdict, cases, headline, phases}."""
    env = dict(os.environ, KATA_HOME=str(home), PYTHONPATH=str(ROOT))
    cmd = [sys.executable, str(ROOT / "lab" / "grade_phases.py"), str(folder), "--kata", kata_id, "--backend", backend]
    cpu0, t0 = _children_cpu(), time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(wall=time.perf_counter() - t0, cpu=_children_cpu() - cpu0, verdict="timeout",
                    cases=0, headline=f"no answer within {timeout:.0f} s", phases={})
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    try:
        out = json.loads(proc.stdout)
        report = out["report"]
    except (json.JSONDecodeError, KeyError, TypeError):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return dict(wall=wall, cpu=cpu, verdict=f"error (exit {proc.returncode})", cases=0, headline=tail[0], phases={})
    perf = report.get("performance") or {}
    return dict(wall=wall, cpu=cpu, verdict=report.get("verdict", "?"),
                cases=(report.get("correctness") or {}).get("cases_run", 0),
                headline=report.get("headline", ""), phases={**out.get("phases", {}), **(perf.get("phases") or {})})


def measure(folder: Path, kata_id: str, backend: str, warm: bool) -> tuple[dict, dict | None]:
    with tempfile.TemporaryDirectory(prefix="kata-grade-times-") as home:
        cold = grade_once(folder, kata_id, Path(home), backend)
        second = grade_once(folder, kata_id, Path(home), backend) if warm else None
    return cold, second


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _phases(p: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in sorted(p.items(), key=lambda kv: -kv[1]) if v >= 0.05)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("katas", nargs="*", help="kata ids (default: every kata's solution; `none`: only --folder ones)")
    ap.add_argument("--folder", action="append", default=[], metavar="DIR:KATA",
                    help="also grade this folder as kata KATA (e.g. a learner-style kernel)")
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--no-warm", action="store_true", help="cold grades only")
    ap.add_argument("--write", type=Path, help="write the markdown table here")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from grader import catalog

    ids = [] if args.katas == ["none"] else args.katas or catalog.ids()
    jobs = [(ROOT / "solutions" / k, k, f"solutions/{k}") for k in ids]
    for spec in args.folder:
        d, _, k = spec.rpartition(":")
        jobs.append((Path(d).resolve(), k, os.path.relpath(Path(d).resolve(), ROOT)))
    load0, started = _load(), datetime.datetime.now(datetime.timezone.utc)
    rows, over = [], []
    for folder, kata_id, label in jobs:
        cold, warm = measure(folder, kata_id, args.backend, not args.no_warm)
        best = min(cold["wall"], warm["wall"]) if warm else cold["wall"]
        if best > GOAL_S or cold["verdict"] != "pass":
            over.append(label)
        w = f"{warm['wall']:.1f} | {warm['cpu']:.1f}" if warm else "- | -"
        row = (f"| {kata_id} | {label} | {cold['verdict']} | {cold['cases']} | {cold['wall']:.1f} | {cold['cpu']:.1f} "
               f"| {w} | {_phases(cold['phases'])} |")
        rows.append(row)
        print(row, flush=True)
    load1 = _load()
    lines = [
        "# CPU grade times of the katas' solutions", "",
        f"- command: `python lab/grade_times.py {' '.join(argv if argv is not None else sys.argv[1:])}`".rstrip(),
        f"- date: {started:%Y-%m-%d %H:%M} UTC",
        f"- machine: {os.cpu_count()} cores, Python {platform.python_version()}",
        f"- 1-minute load average at start / end: {load0:.1f} / {load1:.1f} "
        "(the machine is shared: above the core count wall times are inflated; CPU seconds less so)",
        f"- goal: a CPU grade of each solution at most {GOAL_S:.0f} s on 2 cores", "",
        "cold: a fresh KATA_HOME (nothing compiled yet); warm: a second grade with the same KATA_HOME. "
        "CPU s: user + sys of the grade and its worker processes.", "",
        "| kata | folder | verdict | cases | cold wall s | cold CPU s | warm wall s | warm CPU s | phases (s) |",
        "|---|---|---|---|---|---|---|---|---|", *rows, "",
        f"Over {GOAL_S:.0f} s (or not passing): {', '.join(over) if over else 'none'}", ""]
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text("\n".join(lines))
    print("\n".join(lines[-2:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
