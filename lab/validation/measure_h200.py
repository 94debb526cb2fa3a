"""Time the validation corpus on the GPU with kata's own method, one JSON record per (kernel, case).

    python3 lab/validation/measure_h200.py OUT [--budget-s 420] [--katas KATA ...] [--only kata/design ...]
    python3 lab/validation/measure_h200.py OUT --dry      # here, no GPU: the emulator on small cases, a fake clock

Every lab/validation/<kata>/<design>/ and the kata's solution (first: its outputs are what the
others are compared with, loosely; a disagreement is recorded, never fatal) run at each bench case
of their kata, on inputs made once per case by kata's reference.generate with a fixed seed. Timing
is harness.measure.timing.measure: CUDA events around the launch plan, the 1 GiB read flush of L2
before every sample, the noise rule. Naive kernels run for seconds, so samples are capped by time:
the first run (flushed, event-timed) sets the policy: under 0.5 s, the noise rule with at most
~0.6 s of samples (at least 3); 0.5-1.5 s, exactly 3 samples; 1.5-4 s, 2; longer, 1. The whole run
stops starting kernels once --budget-s is spent and lists what it skipped. Inputs and compiles are
made ahead in worker processes while the GPU times the previous case. Records (OUT/records.json,
rewritten after every kernel): kata, design, case, median_s, samples, stop, first_run_s,
roofline_s and library_s (the model's table), agrees_with_solution, launches, error.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

SEED = 20261202
# the katas of the worst cases first, then the cheaper rest
KATA_ORDER = ("vector-add", "reduce", "spmv", "adamw", "moe-dispatch", "bfs", "attention", "attention-backward",
              "paged-attention", "cross-entropy", "layernorm-backward", "rmsnorm", "softmax", "histogram",
              "transpose", "scan", "layernorm", "qgemv", "matmul-backward", "tc-gemm", "matmul", "topk", "top-p")


def entries(katas=(), only=()) -> list[tuple[str, str, Path]]:
    """(kata, design, folder): per kata the solution first, then the corpus; in KATA_ORDER."""
    from corpus import corpus

    found = corpus()
    order = [k for k in KATA_ORDER if not katas or k in katas]
    out = []
    for kata in order:
        rows = [("solution", ROOT / "solutions" / kata)] + [(d, f) for k, d, f in found if k == kata]
        out += [(kata, d, f) for d, f in rows if not only or d == "solution" or f"{kata}/{d}" in only or kata in only]
    return out


def _compile(folder: str):
    from harness.frontends import nvrtc

    compiled = nvrtc.compile((Path(folder) / "kernel.cu").read_text(), "kernel.cu", cubin=True)
    if not compiled.ok:
        return None, "compile error: " + "; ".join(d.message for d in compiled.errors[:2])
    return (compiled.ptx, compiled.cubin), None


def _generate(kata_id: str, case: dict, seed: int, folder: str) -> dict:
    """The case's inputs, arrays saved as .npy under folder (large arrays do not travel by pipe)."""
    from grader import catalog

    kata = catalog.load(kata_id)
    inputs = kata.reference.generate(np.random.default_rng(seed), **case)
    out = {}
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            path = Path(folder) / f"{name}.npy"
            np.save(path, value)
            out[name] = ("npy", str(path))
        else:
            out[name] = ("value", value)
    return out


def _load_inputs(made: dict) -> dict:
    return {k: (np.load(v, mmap_mode="r") if kind == "npy" else v) for k, (kind, v) in made.items()}


def mismatches(a, b) -> int | None:
    """How many elements of an integer output differ from the solution's (None for float outputs)."""
    xp = np
    if not isinstance(a, np.ndarray):
        import cupy as xp
    if a.shape != b.shape or a.dtype.kind not in "iub":
        return None
    return int(xp.count_nonzero(a != b))


def agree(a, b) -> bool:
    """An output against the solution's at the same case, loosely (float sums in another order)."""
    xp = np
    if not isinstance(a, np.ndarray):
        import cupy as xp
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "iub":
        return bool(xp.array_equal(a, b))
    a64, b64 = a.astype(xp.float64), b.astype(xp.float64)
    finite = xp.isfinite(b64)
    scale = max(1.0, float(xp.max(xp.abs(xp.where(finite, b64, 0.0)))) if b64.size else 1.0)
    same_finite = bool(xp.all(xp.isfinite(a64) == finite))
    err = float(xp.max(xp.abs(xp.where(finite, a64 - b64, 0.0)))) if b64.size else 0.0
    return same_finite and err <= 1e-3 * scale


def policy_for(first_s: float, timing):
    """The sampling policy after a first run of first_s seconds (see the module's doc)."""
    quick = {"warmup_calls": 0, "warmup_s": 0.0, "min_seconds": 0.0}
    if first_s < 0.5:
        return timing.TimingPolicy(warmup_calls=1, warmup_s=0.0, min_samples=3, min_seconds=0.05,
                                   max_seconds=0.6, max_samples=300, target_rse=0.01)
    if first_s < 1.5:
        return timing.TimingPolicy(min_samples=3, max_samples=3, max_seconds=10.0, **quick)
    if first_s < 4.0:
        return timing.TimingPolicy(min_samples=2, max_samples=2, max_seconds=10.0, **quick)
    return timing.TimingPolicy(min_samples=1, max_samples=1, max_seconds=10.0, **quick)


def model_times(kata) -> dict:
    """{case json: (roofline_s, library_s)} from the model's table (None where it has none)."""
    try:
        from grader.performance.model import h200

        return {json.dumps(c["case"], sort_keys=True): ((c.get("roofline_s") or 0.0) + h200.LAUNCH_FLOOR_S,
                                                        c.get("library_s")) for c in h200.entry(kata)["cases"]}
    except Exception:  # noqa: BLE001 - the model is being rewritten: its table may move
        return {}


class GpuClock:
    """first_run(fn, before) -> event-timed seconds of one flushed run; measure(fn, before, policy)."""

    def __init__(self, backend):
        from harness.measure import timing

        self.timing, self.backend = timing, backend
        self.flush, self.clock = timing.L2Flush(1 << 30, "read"), timing.ClockProbe()

    def first_run(self, fn, before) -> float:
        import cupy

        before()
        self.backend.synchronize()
        e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
        self.flush(self.backend.stream)
        e0.record(self.backend.stream)
        fn()
        e1.record(self.backend.stream)
        cupy.cuda.Device().synchronize()
        return cupy.cuda.get_elapsed_time(e0, e1) / 1e3

    def measure(self, fn, before, policy):
        r = self.timing.measure(fn, self.backend.stream, policy=policy, before=before, flush=self.flush,
                                clock=self.clock)
        return r.stats.median, list(r.samples), r.stop


class FakeClock:
    """The dry run's clock: no timing, 1 ms a run."""

    def first_run(self, fn, before) -> float:
        before()
        fn()
        return 1e-3

    def measure(self, fn, before, policy):
        before()
        fn()
        return 1e-3, [1e-3], "dry"


def _outputs(backend, bufs, device: bool) -> dict:
    if device:
        return {name: backend._view(buf).copy() for name, buf in bufs.outs.items()}
    return bufs.outputs()


def run(out_dir: Path, todo, budget_s: float, backend, clock, cases_of, workers: int = 8) -> dict:
    from grader import catalog
    from grader.performance.measured import _Case
    from harness.backends.plan import Plan

    started = time.monotonic()
    out_dir.mkdir(parents=True, exist_ok=True)
    device = backend.name == "gpu"
    doc = {"gpu": backend.facts.name, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seed": SEED,
           "method": "harness.measure.timing.measure: CUDA events, 1 GiB read flush before every sample, noise "
                     "rule; samples capped by the first run's time (lab/validation/measure_h200.py)",
           "budget_s": budget_s, "records": [], "skipped": []}
    save = lambda: (out_dir / "records.json").write_text(json.dumps(doc, indent=1))
    katas = list(dict.fromkeys(k for k, _, _ in todo))
    jobs = [(k, ci, dict(c)) for k in katas for ci, c in enumerate(cases_of(catalog.load(k)))]
    scratch = Path(tempfile.mkdtemp(prefix="corpus-inputs-"))
    ctx = multiprocessing.get_context("spawn")
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    try:
        compiles = {str(f): pool.submit(_compile, str(f)) for _, _, f in todo}
        made = {}

        def ahead(i):  # this case's and the next two cases' inputs in the making
            for j in range(i, min(i + 3, len(jobs))):
                if j not in made:
                    k, ci, c = jobs[j]
                    (scratch / str(j)).mkdir()
                    made[j] = pool.submit(_generate, k, c, SEED + ci, str(scratch / str(j)))

        for ji, (kata_id, ci, case) in enumerate(jobs):
            kata = catalog.load(kata_id)
            mine = [(d, f) for k, d, f in todo if k == kata_id]
            if time.monotonic() - started > budget_s:
                doc["skipped"] += [f"{kata_id}/{d} {json.dumps(case)}" for d, _ in mine]
                continue
            ahead(ji)
            t0 = time.monotonic()
            try:
                bufs = _Case(kata, backend, case, SEED + ci, inputs=_load_inputs(made.pop(ji).result()))
            except Exception as exc:  # noqa: BLE001 - recorded; the other cases still run
                doc["skipped"] += [f"{kata_id}/{d} {json.dumps(case)}: inputs failed: {exc}"[:300] for d, _ in mine]
                continue
            finally:
                shutil.rmtree(scratch / str(ji), ignore_errors=True)
            inputs_s = round(time.monotonic() - t0, 2)
            times = model_times(kata).get(json.dumps(case, sort_keys=True), (None, None))
            reference = None
            for design, folder in mine:
                if time.monotonic() - started > budget_s:
                    doc["skipped"].append(f"{kata_id}/{design} {json.dumps(case)}")
                    continue
                row = {"kata": kata_id, "design": design, "case": case, "inputs_s": inputs_s,
                       "roofline_s": times[0], "library_s": times[1]}
                try:
                    compiled, err = compiles[str(folder)].result()
                    if err:
                        raise RuntimeError(err)
                    backend.load(compiled[0], compiled[1], "kernel.cu")
                    plan = Plan(backend, folder / "launch.py")
                    launch = _load_plan(folder)
                    fn = lambda launch=launch, plan=plan, bufs=bufs: launch(plan, **bufs.args)
                    first = clock.first_run(fn, bufs.prepare)
                    row["first_run_s"] = first
                    row["launches"] = len(plan.launches)
                    outs = _outputs(backend, bufs, device)
                    if reference is None:
                        reference = outs
                    row["agrees_with_solution"] = all(agree(outs[k], reference[k]) for k in outs if k != "indices")
                    if not row["agrees_with_solution"]:
                        row["mismatches"] = {k: mismatches(outs[k], reference[k]) for k in outs}
                    outs = None
                    pol = policy_for(first, getattr(clock, "timing", None)) if device else None
                    row["median_s"], row["samples"], row["stop"] = clock.measure(fn, bufs.prepare, pol)
                    row["n"] = len(row["samples"])
                except Exception as exc:  # noqa: BLE001 - one kernel's failure must not end the run
                    row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                doc["records"].append(row)
                save()
                print(f"{kata_id:18s} {design:34s} {_case_text(case):42s} "
                      f"{row.get('median_s', float('nan')) * 1e3:10.3f} ms n={row.get('n', 0):3d}"
                      + ("" if row.get("agrees_with_solution", True) else "  (differs from the solution)")
                      + (f"  {row['error']}" if "error" in row else ""), flush=True)
            bufs = reference = None
    finally:  # inputs still in the making when the budget ran out are not waited for
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in list((getattr(pool, "_processes", None) or {}).values()):
            proc.terminate()
    shutil.rmtree(scratch, ignore_errors=True)
    doc["wall_s"] = round(time.monotonic() - started, 1)
    save()
    return doc


def _case_text(case: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in case.items())


def _load_plan(folder: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"plan_{abs(hash(str(folder)))}", folder / "launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.launch


def dry_cases(kata) -> list[dict]:
    """A small public case per kata for the dry run (the emulator cannot run bench shapes)."""
    public = [dict(c) for c in kata.public]
    small = sorted(public, key=lambda c: sum(v for v in c.values() if isinstance(v, int)))
    return small[len(small) // 2:len(small) // 2 + 1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--katas", nargs="*", default=[])
    ap.add_argument("--only", nargs="*", default=[], help="kata/design (or kata) to run; solutions always run")
    ap.add_argument("--budget-s", type=float, default=420.0)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--dry", action="store_true", help="no GPU: the emulator on one small case per kata, no timing")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    todo = entries(args.katas, args.only)
    if args.list:
        for k, d, f in todo:
            print(k, d, f.relative_to(ROOT))
        print(len(todo), "kernels")
        return 0
    if args.dry:
        from harness.backends.cpu import CpuBackend

        doc = run(args.out, todo, args.budget_s, CpuBackend(), FakeClock(), dry_cases, args.workers)
    else:
        from harness.backends.gpu import GpuBackend

        backend = GpuBackend()
        doc = run(args.out, todo, args.budget_s, backend, GpuClock(backend), lambda k: k.bench.cases, args.workers)
    bad = [r for r in doc["records"] if "error" in r or not r.get("agrees_with_solution", True)]
    print(f"{len(doc['records'])} records ({len(bad)} with an error or a disagreement), "
          f"{len(doc['skipped'])} skipped, {doc['wall_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
