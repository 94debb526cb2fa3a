"""The schedule-bug corpus (tests/harness/emulator/corpus/races) on a real GPU: every wrong kernel run
RUNS times with the same inputs, every right twin a few times, each checked against numpy by
the case itself. A wrong kernel that never gave a wrong answer is recorded as latent there.

    python3 lab/races_gpu.py OUT_DIR [--runs 20] [--dry]

--dry runs the same loop on kata's emulator instead (no GPU), to check the script. Writes
OUT_DIR/races_gpu.json and prints one line per case. CuPy compiles the .cu files (NVRTC); the
numba kernels run through numba.cuda on CuPy's arrays.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

RACES = Path(__file__).resolve().parents[1] / "tests" / "harness" / "emulator" / "corpus" / "races"
sys.path.insert(0, str(RACES))

import _races
import cases  # noqa: F401  (registers the cases)


class CupyDevice:
    """The corpus' device API over CuPy: buffers are CuPy arrays, numba kernels take them as is."""

    def __init__(self, source: str):
        import cupy as cp

        self.cp, self.source = cp, source
        if source.endswith(".cu"):
            self.mod = cp.RawModule(code=(RACES / source).read_text(), options=("-std=c++17",))
        else:
            self.numba = _races.load_numba_module()

    def upload(self, array):
        return self.cp.asarray(np.ascontiguousarray(array))

    def zeros(self, count, dtype):
        return self.cp.zeros(int(count), dtype)

    def empty(self, count, dtype):
        a = self.cp.empty(int(count), dtype)
        a.view(self.cp.uint8).fill(0xFF)  # poisoned like the grader's outputs
        return a

    def read(self, buf, dtype, count):
        return self.cp.asnumpy(buf.view(np.dtype(dtype))[: int(count)])

    def launch(self, kernel, grid, block, args, shared=0):
        dim = lambda v: tuple((tuple(v) if isinstance(v, (tuple, list)) else (int(v),)) + (1, 1))[:3]
        if self.source.endswith(".cu"):
            self.mod.get_function(kernel)(dim(grid), dim(block), tuple(args), shared_mem=shared)
        else:
            getattr(self.numba, kernel)[dim(grid), dim(block)](*args)
        self.cp.cuda.runtime.deviceSynchronize()


def attempt(make, c, kernel, seed):
    try:
        c.run(make(c.source), np.random.default_rng(seed), kernel)
        return None
    except AssertionError as exc:
        return str(exc).split("\n")[0][:200]
    except Exception as exc:  # noqa: BLE001  (a crash on the GPU counts as a wrong answer, with its reason)
        return f"{type(exc).__name__}: {str(exc)[:160]}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--right-runs", type=int, default=3)
    ap.add_argument("--dry", action="store_true")
    ap.add_argument("--budget-s", type=float, default=120.0)
    ap.add_argument("--only", nargs="*", help="these cases only (default: all)")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.dry:
        make = _races.Device
        device = "kata emulator (dry run)"
    else:
        import cupy as cp

        make = CupyDevice
        device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    started = time.monotonic()
    record = {"device": device, "runs": a.runs,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cases": {}}
    # the barrier-in-a-branch kernel last: were a GPU to hang on it, the rest is already recorded
    order = sorted(((n, c) for n, c in _races.CASES.items() if not a.only or n in a.only),
                   key=lambda kv: kv[1].cls == "branch-barrier")
    for name, c in order:
        if time.monotonic() - started > a.budget_s:
            record["cases"][name] = {"skipped": "budget"}
            continue
        row = {"class": c.cls, "source": c.source, "wrong": c.wrong, "right": c.right}
        try:
            fails = [attempt(make, c, c.wrong, 0) for _ in range(a.runs)]
            bad = [f for f in fails if f is not None]
            row.update(wrong_runs=a.runs, wrong_answers=len(bad), first=bad[0] if bad else None,
                       verdict="wrong on the GPU" if bad else "latent")
            rights = [attempt(make, c, c.right, 0) for _ in range(a.right_runs)]
            row.update(right_runs=a.right_runs, right_wrong=sum(r is not None for r in rights),
                       right_first=next((r for r in rights if r is not None), None))
        except Exception:  # noqa: BLE001  (one case failing to run must not lose the others)
            row["error"] = traceback.format_exc()[-600:]
        record["cases"][name] = row
        (out / "races_gpu.json").write_text(json.dumps(record, indent=1))  # after every case
        print(f"{name:22s} {row.get('verdict', 'error'):18s} {row.get('wrong_answers', '-')}/{a.runs} "
              f"right twin wrong {row.get('right_wrong', '-')}/{a.right_runs}  {row.get('first') or ''}", flush=True)
    record["seconds"] = round(time.monotonic() - started, 1)
    (out / "races_gpu.json").write_text(json.dumps(record, indent=1))
    print(f"{device}: {record['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
