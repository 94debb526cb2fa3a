"""kata's emulator against the other ways to run a Triton or numba kernel without a GPU.

Same kernels (the catalogue's Triton and numba solutions), same launch plans, same inputs:
  * Triton: kata's emulator (sanitizer on, and off) against Triton's interpreter
    (TRITON_INTERPRET=1, torch CPU tensors), which has no sanitizer, counters or timing.
  * numba: kata's emulator against numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1), a Python
    thread per CUDA thread.
Each mode runs in its own process (both switches act at import time); each runs the plan once to
warm up (compiles, JIT of the sanitizer) and reports the best of the timed repeats. The simulator
compiles nothing, so a simulator run over LONG seconds is timed once, its first run. Outputs are
compared with the kata's float64/exact reference. Each kata runs at several sizes: the simulator's
time grows with the threads and the emulator's fixed cost per launch does not, so the ratio is
reported at every size, not only at the best one.

    python lab/frontends_bench.py                 # all cases, a table, JSON to lab/results/
    python lab/frontends_bench.py --only reduce   # the cases of one kata
Needs kata[triton], kata[numba] and torch (CPU).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: (language, kata, params). Triton: a small size and a larger one per kernel. numba: sizes where
#: the simulator (a Python thread per CUDA thread) takes about a second, several, and up to a minute.
CASES = [
    ("triton", "reduce", {"n": 262144}),
    ("triton", "reduce", {"n": 4194304}),
    ("triton", "softmax", {"R": 64, "C": 1024}),
    ("triton", "softmax", {"R": 512, "C": 4096}),
    ("triton", "matmul", {"M": 64, "N": 64, "K": 64}),
    ("triton", "matmul", {"M": 256, "N": 256, "K": 256}),
    ("triton", "layernorm", {"R": 32, "C": 1024}),
    ("triton", "layernorm", {"R": 256, "C": 4096}),
    ("triton", "attention", {"B": 1, "H": 2, "S": 64, "D": 64, "causal": 1}),
    ("triton", "attention", {"B": 2, "H": 4, "S": 256, "D": 64, "causal": 1}),
    ("numba", "reduce", {"n": 4096}),
    ("numba", "reduce", {"n": 32768}),
    ("numba", "reduce", {"n": 131072}),
    ("numba", "histogram", {"n": 4096, "bins": 256}),
    ("numba", "histogram", {"n": 65536, "bins": 256}),
    ("numba", "histogram", {"n": 262144, "bins": 256}),
    ("numba", "scan", {"n": 2048}),
    ("numba", "scan", {"n": 8192}),
    ("numba", "scan", {"n": 16384}),
    ("numba", "spmv", {"m": 256, "k": 256, "avg": 4, "dist": "uniform"}),
    ("numba", "spmv", {"m": 8192, "k": 8192, "avg": 8, "dist": "uniform"}),
]
LONG = 10.0  # seconds: a simulator run this long is timed once
MODES = {"triton": ("emulator+sanitizer", "emulator", "triton-interpreter"),
         "numba": ("emulator+sanitizer", "emulator", "numba-simulator")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="only the cases of this kata")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--modes", help="comma-separated modes to run (default: all), e.g. emulator+sanitizer,emulator")
    ap.add_argument("--out", default=str(ROOT / "lab" / "results" / "frontends.json"))
    ap.add_argument("--worker", nargs=4, metavar=("MODE", "LANG", "KATA", "DATA"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        mode, lang, kata_id, data = args.worker
        print(json.dumps(run_mode(mode, lang, kata_id, Path(data), args.repeats)))
        return
    started = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "uptime": _uptime()}
    rows = []
    for lang, kata_id, params in CASES:
        if args.only and kata_id != args.only:
            continue
        with tempfile.TemporaryDirectory(prefix="kata-fe-bench-") as tmp:
            data = Path(tmp) / "case.npz"
            make_data(kata_id, params, data)
            row = {"language": lang, "kata": kata_id, "params": params}
            wanted = args.modes.split(",") if args.modes else MODES[lang]
            for mode in MODES[lang]:
                row[mode] = in_process(mode, lang, kata_id, data, args.repeats) if mode in wanted else \
                    {"seconds": None, "check": "not run"}
            other = row[MODES[lang][2]]["seconds"]
            for mode in MODES[lang][:2]:
                mine = row[mode]["seconds"]
                row[f"speedup vs {MODES[lang][2]} ({mode})"] = round(other / mine, 1) if mine and other else None
            rows.append(row)
            print(line(row), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    if args.only and Path(args.out).is_file():  # --only: replace that kata's rows, keep the others
        kept = [r for r in json.loads(Path(args.out).read_text())["cases"] if r["kata"] != args.only]
        order = [(lang, k) for lang, k, _ in CASES]
        rows = sorted(kept + rows, key=lambda r: order.index((r["language"], r["kata"])))
    run = {"command": "python lab/frontends_bench.py" + (f" --only {args.only}" if args.only else ""),
           "started": started, "ended": {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                                         "uptime": _uptime()}}
    Path(args.out).write_text(json.dumps({"cases": rows, "repeats": args.repeats, "machine_cpus": os.cpu_count(),
                                          "run": run}, indent=1) + "\n")
    print(f"wrote {args.out}")


def _uptime() -> str:
    """The load average (the machine is shared: other work's load is part of every number)."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def line(row) -> str:
    modes = MODES[row["language"]]
    cells = [f"{m} {row[m]['seconds']:.3f} s ({row[m]['check']})" if row[m]["seconds"] else f"{m} failed: {row[m]['check']}"
             for m in modes]
    speed = [f"{row.get(f'speedup vs {modes[2]} ({m})')}x" for m in modes[:2]]
    return f"{row['language']:6} {row['kata']:10} {row['params']}: " + "; ".join(cells) + f"; speedup {' / '.join(speed)}"


def make_data(kata_id: str, params: dict, path: Path) -> None:
    from grader import catalog
    from grader.grading import cases

    kata = catalog.load(kata_id)
    d = cases.materialize(kata, cases.Case(dict(params), "requested", 0))
    arrays = {f"in_{k}": np.asarray(v) for k, v in d.inputs.items() if isinstance(v, np.ndarray)}
    arrays.update({f"expected_{k}": np.asarray(v) for k, v in d.expected.items()})
    np.savez(path, **arrays, scalars=np.array(json.dumps({k: v for k, v in d.scalars.items()})),
             params=np.array(json.dumps(params)))


def in_process(mode: str, lang: str, kata_id: str, data: Path, repeats: int) -> dict:
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if mode == "triton-interpreter":
        env["TRITON_INTERPRET"] = "1"
    if mode == "numba-simulator":
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    cmd = [sys.executable, __file__, "--repeats", str(repeats), "--worker", mode, lang, kata_id, str(data)]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        return {"seconds": None, "check": (p.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return json.loads(p.stdout.strip().splitlines()[-1])


# -- the worker side: one mode ----------------------------------------------------------------

def run_mode(mode: str, lang: str, kata_id: str, data: Path, repeats: int) -> dict:
    from grader import catalog

    kata = catalog.load(kata_id)
    loaded = np.load(data)
    scalars = json.loads(str(loaded["scalars"]))
    sol = kata.solution_dir / lang
    plan_ns: dict = {"__name__": "kata_launch_plan", "__file__": str(sol / "launch.py")}
    exec(compile((sol / "launch.py").read_text(), str(sol / "launch.py"), "exec"), plan_ns)
    from bench.frontends_adapters import make_runner

    runner = make_runner(mode, sol)
    best = None
    outputs = None
    for i in range(repeats + 1):  # the first run warms up: compiles, JIT, caches
        args = []
        for arg in kata.args:
            if arg.role == "scalar":
                args.append(scalars[arg.name])
            elif arg.role == "out":
                want = loaded[f"expected_{arg.name}"]
                args.append(runner.output(want.size, want.dtype))
            else:
                args.append(runner.input(loaded[f"in_{arg.name}"]))
        t = time.perf_counter()
        plan_ns["launch"](runner, *args)
        runner.synchronize()
        seconds = time.perf_counter() - t
        if i or (mode == "numba-simulator" and seconds > LONG):
            best = seconds if best is None else min(best, seconds)
        outputs = {a.name: runner.fetch(v) for a, v in zip(kata.args, args) if a.role in ("out", "inout")}
        if mode == "numba-simulator" and seconds > LONG:
            break
    return {"seconds": best, "check": check(kata, loaded, outputs), **runner.extra()}


def check(kata, loaded, outputs) -> str:
    worst = 0.0
    for name, got in outputs.items():
        want = loaded[f"expected_{name}"].reshape(-1).astype(np.float64)
        got = np.asarray(got).reshape(-1)[:want.size].astype(np.float64)
        if not np.all(np.isfinite(got)):
            return "non-finite output"
        scale = np.maximum(np.abs(want), 1e-3)
        worst = max(worst, float(np.max(np.abs(got - want) / scale)) if want.size else 0.0)
    return f"max rel err {worst:.1e}"


if __name__ == "__main__":
    main()
