"""The tensor-core zoo on a GPU and on the emulator, with the same inputs: do the two agree?

    python3 lab/tc_zoo_gpu.py                 # on a GPU machine (CuPy): one line per case and size
    python3 lab/tc_zoo_gpu.py --self-check    # no GPU: the emulator against a second emulator
    python3 lab/tc_zoo_gpu.py --only wmma_gemm dp4a_dot
    python3 lab/tc_zoo_gpu.py --hopper        # cases_hopper.py instead, compared bit for bit

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

import _zoo

# Emulator vs device, relative to the largest output: the emulator multiplies exactly and rounds
# once, a tensor core adds in its own order and rounding (f16 accumulators round every k step).
# Both outputs already passed the case's float64 check; this catches what a wrong fragment layout
# or instruction semantics gives, errors the size of the values themselves.
REL = {np.dtype(np.float32): 2.0 ** -12, np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float64): 2.0 ** -30}


def tensor_cases(module: str = "cases_tensor") -> dict:
    """name -> (.cu stem, sizes, function) of the cases in cases_tensor.py (or cases_hopper.py)."""
    spec = importlib.util.spec_from_file_location(f"zoo_{module}", ZOO / f"{module}.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
    names = [n for n, (_, _, fn, _) in _zoo.CASES.items() if fn.__module__ == f"zoo_{module}"]
    return {n: _zoo.CASES[n][:3] for n in sorted(names)}


class GpuDevice:
    """The zoo's Device interface on a GPU: buffers are the backend's, launches go through CuPy."""

    def __init__(self, stem: str):
        from harness.backends.gpu import GpuBackend
        from harness.frontends.nvrtc import compile

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
        # a tensor map by value (a __grid_constant__ CUtensorMap): a 128-byte scalar CuPy passes as is
        args = [np.frombuffer(a, np.dtype([("words", "<u8", (16,))]))[0] if isinstance(a, bytes) else a for a in args]
        self.backend.launch(kernel, dim(grid), dim(block), shared, list(args))
        self.backend.synchronize()

    def tensor_map(self, dtype, buf, dims, strides, box, swizzle="none") -> bytes:
        """The driver's cuTensorMapEncodeTiled for a tensor in buf (dimension 0 innermost)."""
        from cuda.bindings import driver as cu

        cu.cuInit(0)
        names = {"bfloat16": "BFLOAT16", "float16": "FLOAT16", "float32": "FLOAT32", "uint8": "UINT8",
                 "uint16": "UINT16", "uint32": "UINT32", "int32": "INT32", "tfloat32": "TFLOAT32"}
        dt = getattr(cu.CUtensorMapDataType, "CU_TENSOR_MAP_DATA_TYPE_" + names[dtype])
        sw = getattr(cu.CUtensorMapSwizzle, "CU_TENSOR_MAP_SWIZZLE_" + swizzle.upper())
        u32, u64 = cu.cuuint32_t, cu.cuuint64_t  # the bindings take their own integer types
        err, tm = cu.cuTensorMapEncodeTiled(
            dt, u32(len(dims)), self.backend.pointer(buf), [u64(int(d)) for d in dims],
            [u64(int(s)) for s in (list(strides) or [16])],  # rank 1: one unread stride, never an empty array
            [u32(int(b)) for b in box], [u32(1)] * len(dims),
            cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
            cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        if int(err) != 0:
            raise RuntimeError(f"cuTensorMapEncodeTiled: {err}")
        opaque = getattr(tm, "opaque", None)
        if opaque is not None:
            return np.array([int(v) for v in opaque], np.uint64).tobytes()[:128]
        import ctypes
        return ctypes.string_at(int(tm.getPtr()), 128)


def agree(a: np.ndarray, b: np.ndarray, exact: bool = False) -> tuple[bool, float]:
    """Integers exactly; floats within REL of the largest magnitude (exact: bit for bit)."""
    if a.shape != b.shape:
        return False, float("inf")
    if exact:
        ra, rb = np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8)
        return bool(np.array_equal(ra, rb)), float(np.count_nonzero(ra != rb))
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


def compare(name, stem, size, fn, make_device, exact=False) -> tuple[bool, str]:
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
        ok, diff = agree(np.asarray(want[key]), np.asarray(got[key]), exact)
        if not ok:
            if exact:
                return False, f"{key} differs in {diff:.0f} bytes; emulator {_head(want[key])} device {_head(got[key])}"
            return False, f"{key} differs: max |emulator - device| = {diff:.3g}"
        worst = max(worst, diff) if diff == diff else worst
    return True, ("bit for bit" if exact else f"max |emulator - device| = {worst:.3g}")


def _head(a) -> str:
    """The first differing-prone values, as raw hex, for the report line."""
    flat = np.ascontiguousarray(np.asarray(a)).ravel()
    return " ".join(f"{int(v):x}" if flat.dtype.kind in "iu" else repr(float(v)) for v in flat[:6])


def main(argv=None, make_device=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--self-check", action="store_true", help="compare the emulator with itself (no GPU)")
    ap.add_argument("--only", nargs="*", default=None, help="case names (default: all tensor-core cases)")
    ap.add_argument("--hopper", action="store_true", help="the Hopper cases (cases_hopper.py), bit for bit")
    args = ap.parse_args(argv)
    if make_device is None:
        make_device = (lambda stem: _zoo.Device(stem, sanitize=False, counters=False)) if args.self_check \
            else GpuDevice
    cases = tensor_cases("cases_hopper" if args.hopper else "cases_tensor")
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
                ok, text = compare(name, stem, size, fn, make_device, exact=args.hopper)
            except Exception:  # a device that cannot start: say so once per line, keep going
                ok, text = False, traceback.format_exc().strip().splitlines()[-1]
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name} {size}: {text}", flush=True)
    print(f"{'all agree' if not failed else f'{failed} mismatch(es)'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
