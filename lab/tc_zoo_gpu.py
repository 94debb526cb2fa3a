"""The tensor-core zoo on a GPU and on the emulator, with the same inputs: do the two agree?

    python3 lab/tc_zoo_gpu.py                 # on a GPU machine (CuPy): one line per case and size
    python3 lab/tc_zoo_gpu.py --self-check    # no GPU: the emulator against a second emulator
    python3 lab/tc_zoo_gpu.py --only wmma_gemm dp4a_dot

Every case of tests/harness/emulator/zoo/cases_tensor.py runs twice from the same seed: on the emulator
(sanitizer on: any finding fails the line) and on the device, each checked against numpy by the
case itself, then the two outputs are compared: integers exactly, floats within 2^-12 (float32)
or 2^-6 (float16) of the output's magnitude (the emulator multiplies in float64 and rounds once;
a tensor core accumulates in its own order). The GPU side compiles with the same NVRTC to an sm_90 cubin, as
the grader's GPU backend does. Exit status 0 when every line says ok, 1 otherwise.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ZOO = ROOT / "tests" / "harness" / "emulator" / "zoo"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ZOO))

import _zoo  # noqa: E402

# Emulator vs device, relative to the largest output: the emulator multiplies exactly and rounds
# once, a tensor core adds in its own order and rounding (f16 accumulators round every k step).
# Both outputs already passed the case's float64 check; this catches what a wrong fragment layout
# or instruction semantics gives, errors the size of the values themselves.
REL = {np.dtype(np.float32): 2.0 ** -12, np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float64): 2.0 ** -30}


def tensor_cases() -> dict:
    """name -> (.cu stem, sizes, function) of the cases in cases_tensor.py."""
    spec = importlib.util.spec_from_file_location("zoo_cases_tensor", ZOO / "cases_tensor.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    names = [n for n, (_, _, fn, _) in _zoo.CASES.items() if fn.__module__ == "zoo_cases_tensor"]
    return {n: _zoo.CASES[n][:3] for n in sorted(names)}


class GpuDevice:
    """The zoo's Device interface on a GPU: buffers are the backend's, launches go through CuPy."""

    def __init__(self, stem: str):
        from harness.frontends.nvrtc import compile
        from harness.backends.gpu import GpuBackend

        r = compile((ZOO / f"{stem}.cu").read_text(), filename=f"{stem}.cu", cubin=True)
        if not r.ok:
            raise RuntimeError(f"{stem}.cu does not compile: {r.log}")
        self.backend = GpuBackend()
        self.backend.load(r.ptx, r.cubin, f"{stem}.cu")

    def upload(self, array):
        return self.backend.upload(np.ascontiguousarray(array))

    def _alloc(self, count, dtype, byte):
        buf = self.backend.alloc(max(int(count), 1), dtype)
        self.backend.memset(buf, byte)
        return buf

    def zeros(self, count, dtype):
        return self._alloc(count, dtype, 0)

    def empty(self, count, dtype):
        return self._alloc(count, dtype, 0xFF)

    def read(self, buf, dtype, count):
        return np.ascontiguousarray(self.backend.download(buf)).view(np.dtype(dtype))[: int(count)]

    def launch(self, kernel, grid, block, args, shared=0):
        dim = lambda v: tuple((tuple(v) if isinstance(v, (tuple, list)) else (int(v),)) + (1, 1))[:3]
        self.backend.launch(kernel, dim(grid), dim(block), shared, list(args))
        self.backend.synchronize()


def agree(a: np.ndarray, b: np.ndarray) -> tuple[bool, float]:
    """Integers exactly; floats within REL of the largest magnitude."""
    if a.shape != b.shape:
        return False, float("inf")
    if a.dtype.kind in "iu":
        diff = np.abs(a.astype(np.int64) - b.astype(np.int64))
        return bool((diff == 0).all()), float(diff.max(initial=0))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if np.isnan(a64).any() or np.isnan(b64).any():
        return bool(np.array_equal(np.isnan(a64), np.isnan(b64)) and np.allclose(a64, b64, equal_nan=True)), \
            float("nan")
    diff = float(np.abs(a64 - b64).max(initial=0.0))
    scale = max(1.0, float(np.abs(b64).max(initial=0.0)))
    return diff <= REL.get(a.dtype, 2.0 ** -12) * scale, diff


def run_case(fn, dev, name, size):
    """(outputs, error text or None): the case's own numpy check runs inside."""
    rng = np.random.default_rng(zlib.crc32(f"{name}-{size}".encode()))
    try:
        return fn(dev, size, rng), None
    except Exception as exc:  # one bad case must not hide the others
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0][:200]


def compare(name, stem, size, fn, make_device) -> tuple[bool, str]:
    emu = _zoo.Device(stem)
    want, err = run_case(fn, emu, name, size)
    if err is None and emu.emu.findings:
        f = emu.emu.findings[0]
        err = f"emulator finding {f.kind} at {f.where()}"
    if err is not None:
        return False, f"emulator: {err}"
    got, err = run_case(fn, make_device(stem), name, size)
    if err is not None:
        return False, f"device: {err}"
    worst = 0.0
    for key in want:
        ok, diff = agree(np.asarray(want[key]), np.asarray(got[key]))
        if not ok:
            return False, f"{key} differs: max |emulator - device| = {diff:.3g}"
        worst = max(worst, diff) if diff == diff else worst
    return True, f"max |emulator - device| = {worst:.3g}"


def main(argv=None, make_device=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-check", action="store_true", help="compare the emulator with itself (no GPU)")
    ap.add_argument("--only", nargs="*", default=None, help="case names (default: all tensor-core cases)")
    args = ap.parse_args(argv)
    if make_device is None:
        make_device = (lambda stem: _zoo.Device(stem, sanitize=False, counters=False)) if args.self_check \
            else GpuDevice
    cases = tensor_cases()
    unknown = set(args.only or ()) - set(cases)
    if unknown:
        print(f"unknown case(s) {', '.join(sorted(unknown))}; there are {', '.join(cases)}", file=sys.stderr)
        return 2
    failed = 0
    for name, (stem, sizes, fn) in cases.items():
        if args.only and name not in args.only:
            continue
        for size in sizes:
            try:
                ok, text = compare(name, stem, size, fn, make_device)
            except Exception:  # a device that cannot start: say so once per line, keep going
                ok, text = False, traceback.format_exc().strip().splitlines()[-1]
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} {size}: {text}", flush=True)
    print(f"{'all agree' if not failed else f'{failed} mismatch(es)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
