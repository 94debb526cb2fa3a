"""A kata's first GPU grade on a fresh machine, and its second: the 10 s goal of issue 28.

    python lab/first_gpu_grade.py [KATA ...] [--out DIR] [--timeout 60] [--budget 260] [--backend cpu]

Needs a CUDA GPU that CuPy sees (--backend cpu: a dry run of the plumbing on the CPU, where the
grades are CPU grades and no inputs are made ahead); without one it says so and exits 2 at once.
The machine's calibration (`kata calibrate`) is measured once into a scratch KATA_HOME and copied
into every fresh KATA_HOME, so "first" is a kata's first grade on a calibrated machine: empty
compile and bench-input caches. Per kata, three grades of solutions/ID, each with
`python lab/grade_phases.py` (the grade `kata grade --json` runs, its steps timed) in a subprocess:

  first   in a fresh KATA_HOME, right after `kata start ID` (which, on a GPU machine, starts making
          the bench inputs ahead, detached): the learner who grades at once; the grade and the
          detached process share the work through the cache's locks
  second  the same KATA_HOME again: the caches the first left
  ready   in another fresh KATA_HOME: `kata start ID`, then wait until every bench input set and the
          library's time at each bench case are in the cache ("inputs ready after" says how long
          that took), then the first grade there: the
          learner who wrote for a minute before grading
  cold    (--cold) in a third fresh KATA_HOME, no `kata start`: what runs 1-2 measured as "first"

Writes first-gpu-grade.md (the table, then each grade's steps and the performance stage's phases)
and first-gpu-grade.json into DIR (default $OUT, else lab/results), rewritten after every kata, so
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
KATAS = ("reduce", "layernorm", "qgemv", "paged-attention", "transpose", "softmax", "scan")
MODES = ("first", "second", "ready")


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


def _env(home: Path, ahead: bool) -> dict:
    return dict(os.environ, KATA_HOME=str(home), KATA_BENCH_AHEAD="" if ahead else "0")


def start(kata_id: str, home: Path, ahead: bool) -> tuple[Path, float]:
    """`kata start ID` in home's workspace, then the solution's files copied over the stub (the
    learner's finished kernel): (the workspace, seconds the start command took)."""
    ws = home / "ws" / kata_id
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "grader", "start", kata_id, str(ws)], cwd=ROOT, env=_env(home, ahead),
                   capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - t0
    ws.mkdir(parents=True, exist_ok=True)
    for f in (ROOT / "solutions" / kata_id).iterdir():
        if f.is_file():
            shutil.copy(f, ws / f.name)
    # a learner's kernel is never the solution byte for byte: no compile the machine made for the
    # solution (kata start's emulator warm-up grades it) may count for this grade
    with open(ws / "kernel.cu", "a") as f:
        f.write("\n// the learner's copy (lab/first_gpu_grade.py)\n")
    return ws, took


def grade(kata_id: str, folder: Path, home: Path, timeout: float, backend: str, ahead: bool) -> dict:
    """One grade in a subprocess through lab/grade_phases.py (the grade `kata grade --json` runs,
    with the whole grade's steps timed as well as the performance stage's)."""
    cmd = [sys.executable, str(ROOT / "lab" / "grade_phases.py"), str(folder), "--kata", kata_id, "--backend", backend]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_env(home, ahead), timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(wall=time.perf_counter() - t0, verdict="timeout", headline=f"over {timeout:.0f} s", phases={},
                    grade={})
    wall = time.perf_counter() - t0
    try:
        out = json.loads(proc.stdout)
        report = out["report"]
    except (json.JSONDecodeError, KeyError, TypeError):
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return dict(wall=wall, verdict=f"error (exit {proc.returncode})", headline=tail[0], phases={}, grade={})
    perf = report.get("performance") or {}
    return dict(wall=wall, verdict=report.get("verdict", "?"), headline=report.get("headline", ""),
                phases=perf.get("phases") or {}, data_s=perf.get("data_s"), grade=out.get("phases") or {})


def wait_inputs_ready(kata_id: str, home: Path, limit_s: float) -> float | None:
    """Seconds until every bench input set of a grade with the default seed is in home's cache
    (what `kata start` makes ahead), or None when they were not all there within limit_s."""
    from grader import catalog
    from grader.grading.cases import DEFAULT_SEED
    from grader.performance.bench_inputs import _key
    from grader.performance.bench_pool import input_sets
    from grader.performance.prefetching import bench_seeds, rotation_seeds

    kata = catalog.load(kata_id)
    seeds = bench_seeds(len(kata.bench.cases), DEFAULT_SEED)
    root = home / "cache" / "bench"
    keys = [_key(kata, c, s) for _, c, s in input_sets(kata, seeds, rotation_seeds(seeds))]
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < limit_s:
        if all((root / k / "meta.json").exists() for k in keys) and _libraries_timed(kata, home):
            return time.perf_counter() - t0
        time.sleep(0.05)
    return None


def _libraries_timed(kata, home: Path) -> bool:
    """The library's time at every bench case is in home's cache too (`kata start` times it after
    the inputs; grader/performance/baseline_cache.py), where the kata has a baseline and torch is here."""
    from grader.grading.cases import DEFAULT_SEED
    from grader.performance import baseline_cache
    from grader.performance.prefetching import bench_seeds
    from harness.measure.timing import TimingPolicy

    if getattr(kata.reference, "baseline", None) is None or baseline_cache.torch_version() is None:
        return True
    old = os.environ.get("KATA_HOME")
    os.environ["KATA_HOME"] = str(home)
    try:
        return baseline_cache.all_cached(kata, bench_seeds(len(kata.bench.cases), DEFAULT_SEED), TimingPolicy())
    finally:
        if old is None:
            os.environ.pop("KATA_HOME")
        else:
            os.environ["KATA_HOME"] = old


def _phases(p: dict) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in sorted(p.items(), key=lambda kv: -kv[1]) if v >= 0.1) or "-"


def _s(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def measure_kata(kata_id: str, scratch: Path, calibration: Path, args, ahead: bool) -> dict:
    """The kata's three grades (MODES), each home removed afterwards (bench inputs take GBs)."""
    result: dict = {}
    for name in ("a", "b"):
        home = scratch / f"{kata_id}-{name}"
        home.mkdir()
        if calibration.exists():
            shutil.copy(calibration, home / "calibration.json")
        ws, result[f"start_s_{name}"] = start(kata_id, home, ahead)
        if name == "a":
            result["first"] = grade(kata_id, ws, home, args.timeout, args.backend, ahead)
            result["second"] = grade(kata_id, ws, home, args.timeout, args.backend, ahead)
        else:
            result["inputs_ready_s"] = wait_inputs_ready(kata_id, home, args.ready_limit) if ahead else None
            result["ready"] = grade(kata_id, ws, home, args.timeout, args.backend, ahead)
        shutil.rmtree(home, ignore_errors=True)
    if args.cold:  # as runs 1-2 measured it: no `kata start`, nothing made ahead, the grade's own inputs
        home = scratch / f"{kata_id}-cold"
        (home / "ws").mkdir(parents=True)
        if calibration.exists():
            shutil.copy(calibration, home / "calibration.json")
        ws = home / "ws" / kata_id
        ws.mkdir()
        for f in (ROOT / "solutions" / kata_id).iterdir():
            if f.is_file():
                shutil.copy(f, ws / f.name)
        with open(ws / "kernel.cu", "a") as f:
            f.write("\n// the learner's copy (lab/first_gpu_grade.py)\n")
        result["cold"] = grade(kata_id, ws, home, args.timeout, args.backend, False)
        shutil.rmtree(home, ignore_errors=True)
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("katas", nargs="*")
    ap.add_argument("--out", type=Path, default=Path(os.environ["OUT"]) if os.environ.get("OUT") else ROOT / "lab" / "results")
    ap.add_argument("--timeout", type=float, default=60.0, help="per grade")
    ap.add_argument("--ready-limit", type=float, default=60.0, help="longest wait for the inputs made ahead")
    ap.add_argument("--budget", type=float, default=260.0,
                    help="start no kata after this many seconds (a device call has 600 s); the table so far stays")
    ap.add_argument("--backend", default="gpu", help="cpu: try this script's plumbing without a GPU")
    ap.add_argument("--cold", action="store_true",
                    help="also a first grade without `kata start` (nothing made ahead), as runs 1-2 measured it")
    args = ap.parse_args(argv)
    ok, why = gpu_present() if args.backend == "gpu" else (True, "")
    if not ok:
        print(f"first_gpu_grade: no GPU to grade on ({why}). Run this on a machine whose GPU CuPy sees "
              "(pip install -e '.[gpu]'); on the CPU, --backend cpu tries the plumbing.", file=sys.stderr)
        return 2
    ahead = args.backend == "gpu"  # a CPU grade times nothing: no inputs made ahead in the dry run
    ids = args.katas or list(KATAS)
    args.out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="kata-first-gpu-"))
    t0 = time.perf_counter()
    cal = subprocess.run([sys.executable, "-m", "grader", "calibrate"], cwd=ROOT, capture_output=True, text=True,
                         env=_env(scratch / "calibrated", False), timeout=args.timeout)
    calibrate_s = time.perf_counter() - t0
    calibration = scratch / "calibrated" / "calibration.json"
    rows, details, results, over, skipped = [], [], {}, [], []
    started = datetime.datetime.now(datetime.timezone.utc)
    head = [f"# A kata's first {args.backend.upper()} grade on a fresh (calibrated) machine, and its second", "",
            f"- command: `python lab/first_gpu_grade.py {' '.join(argv if argv is not None else sys.argv[1:])}`".rstrip(),
            f"- date: {started:%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores",
            f"- `kata calibrate` once first: {calibrate_s:.1f} s (exit {cal.returncode}), copied into each fresh KATA_HOME",
            f"- goal: first grade at most {GOAL_S:.0f} s. Wall seconds of `python lab/grade_phases.py` (a whole "
            "`kata grade` process); the first kata measured also pays the machine's cold caches (numba, CUDA)",
            "- first: fresh KATA_HOME, graded right after `kata start` (inputs made ahead"
            + (" start with it" if ahead else ": off in this run") + "); second: the same home again; "
            "ready: another fresh home, `kata start`, graded once its inputs were all made (the detached "
            "process's emulator warm-up, a CPU grade of the solution, may still run beside it, as beside the "
            "first); the graded kernel is the solution plus a comment (no compile of the warm-up counts)", "",
            "| kata | verdict | first s | second s | inputs ready after s | ready s | kata start s | cold (no start) s |",
            "|---|---|---|---|---|---|---|---|"]
    for kata_id in ids:
        if time.perf_counter() - t0 > args.budget:
            skipped.append(kata_id)
            continue
        r = results[kata_id] = measure_kata(kata_id, scratch, calibration, args, ahead)
        modes = MODES + (("cold",) if "cold" in r else ())
        verdicts = {r[m]["verdict"] for m in modes}
        if r["first"]["wall"] > GOAL_S or verdicts != {"pass"}:
            over.append(kata_id)
        row = (f"| {kata_id} | {'/'.join(r[m]['verdict'] for m in modes)} | {r['first']['wall']:.1f} | "
               f"{r['second']['wall']:.1f} | {_s(r['inputs_ready_s'])} | {r['ready']['wall']:.1f} | "
               f"{r['start_s_a']:.1f} | {_s(r['cold']['wall'] if 'cold' in r else None)} |")
        rows.append(row)
        print(row, flush=True)
        details += [f"### {kata_id}", ""] + [
            f"- {m}: {r[m]['wall']:.1f} s; grade steps: {_phases(r[m]['grade'])}; performance phases: "
            f"{_phases(r[m]['phases'])}" + ("" if r[m]["verdict"] == "pass" else f"; {r[m]['headline']}")
            for m in modes] + [""]
        tail = ["", f"First grade over {GOAL_S:.0f} s (or not passing): {', '.join(over) if over else 'none'}"]
        if skipped or kata_id != ids[-1]:
            tail.append(f"Not measured (yet, or over --budget {args.budget:.0f} s): "
                        + ", ".join(skipped + ids[ids.index(kata_id) + 1:]))
        tail.append(f"Device seconds so far: {time.perf_counter() - t0:.0f}")
        (args.out / "first-gpu-grade.md").write_text("\n".join(head + rows + tail + ["", "## Where the time went", ""]
                                                               + details))
        (args.out / "first-gpu-grade.json").write_text(json.dumps(results, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)
    print((args.out / "first-gpu-grade.md").read_text().split("\n\n## ")[0].split("\n\n")[-1] if rows
          else "nothing measured")
    return 0


if __name__ == "__main__":
    sys.exit(main())
