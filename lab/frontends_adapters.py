"""The launch-plan API (`gpu.launch`, `memset`, `empty`, `cdiv`, `device`) over three machines, so
lab/frontends_bench.py runs the catalogue's own launch.py unchanged on each: kata's emulator
(through the real Plan and DialectBackend), Triton's interpreter and numba's CUDA simulator."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from harness.backends.base import H200
from harness.backends.plan import Plan, cdiv


def make_runner(mode: str, solution: Path):
    if mode.startswith("emulator"):
        return EmulatorRunner(solution, sanitize=mode.endswith("sanitizer"))
    if mode == "triton-interpreter":
        return InterpreterRunner(solution)
    return SimulatorRunner(solution)


def _import(path: Path):
    spec = importlib.util.spec_from_file_location("bench_kernel", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_kernel"] = module
    spec.loader.exec_module(module)
    return module


class EmulatorRunner(Plan):
    def __init__(self, solution: Path, sanitize: bool):
        from harness.backends.cpu import CpuBackend
        from harness.backends.dialect import DialectBackend

        self.backend = DialectBackend(CpuBackend(sanitize=sanitize), solution / "kernel.py")
        super().__init__(self.backend, solution / "launch.py")

    def input(self, array):
        return self.backend.upload(np.ascontiguousarray(array).reshape(-1))

    def output(self, count, dtype):
        buf = self.backend.alloc(int(count), dtype)
        self.backend.memset(buf, 0xFF)
        return buf

    def fetch(self, buf):
        return self.backend.download(buf)

    def synchronize(self):
        self.backend.synchronize()

    def extra(self):
        return {"findings": sorted({f.kind for f in self.backend.findings})}


class _HostPlan:
    """What the interpreter and the simulator share: buffers are host arrays."""

    device = H200

    @staticmethod
    def cdiv(a, b):
        return cdiv(a, b)

    def synchronize(self):
        return None

    def extra(self):
        return {}


class InterpreterRunner(_HostPlan):
    def __init__(self, solution: Path):
        import torch

        self.torch = torch
        self.module = _import(solution / "kernel.py")

    def input(self, array):
        return self.torch.from_numpy(np.ascontiguousarray(array).reshape(-1).copy())

    def output(self, count, dtype):
        return self.torch.from_numpy(np.full(int(count), np.nan, dtype))

    def fetch(self, t):
        return t.numpy()

    def empty(self, count, dtype="float32"):
        return self.torch.from_numpy(np.empty(int(count), dtype))

    def zeros(self, count, dtype="float32"):
        return self.torch.from_numpy(np.zeros(int(count), dtype))

    def memset(self, t, byte=0):
        t.view(self.torch.uint8).fill_(int(byte))

    def launch(self, name, grid, block=None, args=(), shared=0, num_warps=4, num_stages=3, constexprs=None):
        grid = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        getattr(self.module, name)[grid](*args, **dict(constexprs or {}), num_warps=num_warps,
                                         num_stages=num_stages)


class SimulatorRunner(_HostPlan):
    def __init__(self, solution: Path):
        self.module = _import(solution / "kernel.py")

    def input(self, array):
        return np.ascontiguousarray(array).reshape(-1).copy()

    def output(self, count, dtype):
        out = np.empty(int(count), dtype)
        out.view(np.uint8)[:] = 0xFF
        return out

    def fetch(self, a):
        return a

    def empty(self, count, dtype="float32"):
        return np.empty(int(count), dtype)

    def zeros(self, count, dtype="float32"):
        return np.zeros(int(count), dtype)

    def memset(self, a, byte=0):
        a.view(np.uint8)[:] = int(byte)

    def launch(self, name, grid, block, args=(), shared=0):
        getattr(self.module, name)[grid, block, 0, shared](*args)
