"""Run the real-code corpus (tests/harness/emulator/corpus) through a Backend instead of the emulator: on a
GPU this checks that every kernel the emulator calls correct is correct on the hardware too, with
the same numpy references and tolerances.

    python lab/corpus_gpu.py                 # the GPU (CuPy); exit 0 when every case passes
    python lab/corpus_gpu.py --backend cpu   # the same cases through the CPU backend (a dry run)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_counts import _load  # noqa: E402


class BackendDevice:
    """The corpus cases' device API (upload, zeros, empty, read, launch, kernel) over a Backend."""

    def __init__(self, backend, stem: str, corpus):
        import zlib

        from harness.frontends.nvrtc import compile

        self.b = backend
        folder = corpus.CORPUS
        stamp = zlib.crc32((folder / "common.cuh").read_bytes())
        r = compile((folder / f"{stem}.cu").read_text(), filename=f"{stem}.cu", cubin=backend.name == "gpu",
                    options=(f"-DCORPUS_COMMON={stamp}",), include_dir=folder)
        assert r.ok, r.log
        backend.load(r.ptx, r.cubin, f"{stem}.cu")
        entries = getattr(backend, "entries", None) or backend._module.kernels
        self.mod = SimpleNamespace(kernels=entries)
        self.kernel = lambda base, suffix="": corpus.Device.kernel(self, base, suffix)

    def upload(self, array):
        return self.b.upload(np.ascontiguousarray(array).reshape(-1))

    def zeros(self, count, dtype):
        buf = self.b.alloc(max(int(count), 4), dtype)
        self.b.memset(buf, 0)
        return buf

    def empty(self, count, dtype):
        buf = self.b.alloc(max(int(count), 4), dtype)
        self.b.memset(buf, 0xFF)  # the grader's poison
        return buf

    def read(self, buf, dtype, count):
        return np.asarray(self.b.download(buf)).view(np.dtype(dtype))[: int(count)]

    def launch(self, kernel, grid, block, args, shared=0):
        dim = lambda v: tuple((tuple(v) if isinstance(v, (tuple, list)) else (int(v),)) + (1, 1))[:3]
        self.b.launch(kernel, dim(grid), dim(block), int(shared), list(args))
        self.b.synchronize()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("gpu", "cpu"), default="gpu")
    args = ap.parse_args()
    corpus = _load()
    if args.backend == "gpu":
        from harness.backends.gpu import GpuBackend
        make = GpuBackend
    else:
        from harness.backends.cpu import CpuBackend
        make = CpuBackend
    failed = 0
    for name in sorted(corpus.CASES):
        source, fn, kernels = corpus.CASES[name]
        t = time.perf_counter()
        try:
            fn(BackendDevice(make(), source, corpus), np.random.default_rng(0))
            verdict = "ok"
        except AssertionError as exc:
            verdict, failed = f"WRONG {str(exc).splitlines()[0][:200]}", failed + 1
        print(f"{name:36s} {kernels:2d} kernel(s) {time.perf_counter() - t:6.2f} s  {verdict}", flush=True)
    print(f"{len(corpus.CASES) - failed}/{len(corpus.CASES)} cases passed on the {args.backend} backend")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
