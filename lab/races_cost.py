"""What the schedule-bug checks (global-race shadow, order check) cost a CPU grade: each kata's
solution graded by lab/grade_phases.py in two source trees, alternating, each in its own process
with a fresh KATA_HOME, timing the CPU seconds (user + sys of the grade and its workers), which a
shared machine disturbs less than wall time.

    python lab/races_cost.py BASE_TREE NEW_TREE [KATA ...] [--repeat 1] [--out FILE.json]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def grade(tree: Path, kata: str) -> dict:
    folder = tree / "solutions" / kata
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "KATA_HOME": home, "PYTHONPATH": str(tree)}
        proc = subprocess.run([sys.executable, str(tree / "lab" / "grade_phases.py"), str(folder), "--kata", kata,
                               "--backend", "cpu"], capture_output=True, text=True, cwd=tree, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    try:
        out = json.loads(proc.stdout)
        verdict, phases = out["report"]["verdict"], out["phases"]
    except (ValueError, KeyError):
        verdict, phases = f"error: {proc.stderr[-300:]}", {}
    return {"cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "verdict": verdict, "phases": phases}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("katas", nargs="*")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    katas = a.katas or sorted(p.name for p in (a.new / "solutions").iterdir() if (p / "launch.py").exists())
    rows = {}
    for kata in katas:
        runs = {"base": [], "new": []}
        for _ in range(a.repeat):
            for side in ("base", "new"):
                runs[side].append(grade(getattr(a, side), kata))
        b = min(r["cpu_s"] for r in runs["base"])
        n = min(r["cpu_s"] for r in runs["new"])
        rows[kata] = {**runs, "base_cpu_s": b, "new_cpu_s": n, "ratio": round(n / b, 3) if b else None,
                      "load": os.getloadavg()[0]}
        print(f"{kata:20s} base {b:7.1f} s  new {n:7.1f} s  x{rows[kata]['ratio']}  "
              f"{runs['new'][0]['verdict']}  order {runs['new'][0]['phases'].get('order check (other schedules)', 0):.1f} s",
              flush=True)
        if a.out:
            a.out.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
