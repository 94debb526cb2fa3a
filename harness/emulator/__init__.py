"""A CPU emulator of an NVIDIA GPU that runs the PTX NVRTC produces (see docs/emulator-api.md).

    emu = Emulator(sanitize=True, counters=True)
    mod = emu.load(ptx, filename="kernel.cu")
    x = emu.alloc(4 * n); emu.write(x, host_array)
    res = emu.launch(mod, "reduce", grid=(g, 1, 1), block=(256, 1, 1), args=[x, out, n])

Modules: ptx (loader), engine and sync (scheduler), lanes (per-launch state), memory (memory
model), ops_* (instruction semantics), observer (hooks), sanitizer and counters (observers, with
shared_shadow, sanitizer_report, initcheck, tally and warp_costs).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from .findings import (
    KINDS,
    SYMPTOMS,
    EmulatorError,
    Finding,
    UnsupportedPTX,
    cause_rank,
)
from .initcheck import GlobalInit
from .memory import GlobalMemory
from .observer import Fanout, Observer
from .ptx import Function, Module, Param, load_ptx

__all__ = ["Emulator", "Finding", "EmulatorError", "UnsupportedPTX", "LaunchResult", "LoadedModule",
           "Observer", "Param", "KINDS"]


@dataclass(frozen=True)
class LaunchResult:
    findings: list  # list[Finding] of this launch: engine findings first, then the observers'
    counters: object | None  # the Counters observer when counters=True, else None
    stopped: bool  # True when the watchdog, a deadlock or a trap ended the launch early
    instructions: int  # issued PC-group instructions (the watchdog's unit)
    printed: tuple = ()  # device printf: (block, thread, seq, block xyz, thread xyz, text) (printf.py)
    printed_cut: int = 0  # printf lines past printf.KEEP, counted only
    # with a schedule: (file, line) of atomics whose returned values the arrival order changed
    atomic_order: tuple = ()
    work: int = 0  # emulated work (engine.Engine.work: lanes weighted by opcode, plus issues)


class LoadedModule:
    """A parsed module with its module-level .global/.const variables placed in device memory."""

    def __init__(self, module: Module, globals_at: dict[str, int]):
        self.module = module
        self.globals_at = globals_at
        self.kernels = {n: f for n, f in module.functions.items() if f.entry}

    def kernel(self, name: str) -> Function:
        if name in self.kernels:
            return self.kernels[name]
        for mangled, f in self.kernels.items():  # _Z6reducePKfPfi finds "reduce"
            m = re.match(r"_Z(\d+)", mangled)
            if m and mangled[m.end():m.end() + int(m[1])] == name:
                return f
        raise EmulatorError(f"no kernel named {name!r} in {self.module.filename}; it has "
                            f"{', '.join(self.kernels) or 'none'}")


class Emulator:
    def __init__(self, sanitize: bool = False, counters: bool = False, max_resident_blocks: int | None = None,
                 instruction_budget: int = 2_000_000_000, wall_clock_s: float = 60.0,
                 observers: list[Observer] | None = None, schedule: int = 0):
        self.sanitize, self.counters = sanitize, counters
        # 0: the default order; s > 0: another legal order of blocks, warps and atomics (schedule.py)
        self.schedule, self._launched = int(schedule), 0
        self.max_resident_blocks = max_resident_blocks
        self.instruction_budget, self.wall_clock_s = instruction_budget, wall_clock_s
        self.work_budget: int | None = None  # emulated work per launch (engine.Engine.work), None: no cap
        self.extra_observers = list(observers or [])
        self.mem = GlobalMemory()
        self.init = GlobalInit()  # bytes marked unwritten, for the sanitizer's global initcheck
        self.findings: list[Finding] = []

    # ---- memory ------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> int:
        return self.mem.alloc(nbytes)

    def write(self, ptr: int, array) -> None:
        array = np.asarray(array)
        self.mem.write(int(ptr), array)
        if self.init.ranges:
            self.init.written(int(ptr), array.nbytes)

    def read(self, ptr: int, dtype, count: int) -> np.ndarray:
        return self.mem.read(int(ptr), dtype, int(count))

    def memset(self, ptr: int, byte: int, nbytes: int) -> None:
        self.mem.memset(int(ptr), int(byte), int(nbytes))
        if self.init.ranges:
            self.init.written(int(ptr), int(nbytes))

    def mark_unwritten(self, ptr: int, nbytes: int) -> None:
        """These bytes count as never written (garbage on a GPU: a fresh allocation, a poisoned
        output) until a kernel or the host writes them; with sanitize=True a kernel reading them
        first is an uninitialized-read finding. The bytes themselves are left as they are."""
        self.init.mark_unwritten(int(ptr), int(nbytes))

    # ---- modules and launches ----------------------------------------------------------------
    def load(self, ptx: str, filename: str = "kernel.cu") -> LoadedModule:
        module = load_ptx(ptx, filename)
        globals_at = {}
        for v in module.vars.values():
            if v.space in ("global", "const"):
                addr = self.alloc(max(1, v.size))
                if v.init:
                    self.mem.write(addr, np.frombuffer(v.init, np.uint8))
                else:
                    self.mem.memset(addr, 0, max(1, v.size))
                globals_at[v.name] = addr
        return LoadedModule(module, globals_at)

    def _observers(self, code=None) -> tuple[Observer | None, object | None]:
        obs: list[Observer] = []
        counters = None
        if self.sanitize:
            try:
                from .async_check import AsyncCopyCheck
                from .sanitizer import Sanitizer
                from .hopper_check import HopperCheck
                obs.extend([Sanitizer(init=self.init, mem=self.mem, code=code), AsyncCopyCheck(), HopperCheck()])
            except ImportError:
                pass
        if self.counters:
            try:
                from .counters import Counters
                counters = Counters()
                obs.append(counters)
            except ImportError:
                pass
        obs.extend(self.extra_observers)
        if not obs:
            return None, counters
        return (obs[0] if len(obs) == 1 else Fanout(obs)), counters

    def launch(self, mod: LoadedModule, name: str, grid=(1, 1, 1), block=(1, 1, 1), shared_bytes: int = 0,
               args=(), blocks=None) -> LaunchResult:
        """blocks: run only these linear block ids of the grid (None: all of them)."""
        from .engine import Engine

        kernel = mod.kernel(name)
        observer, counters = self._observers(mod.module.code)
        sched = None
        if self.schedule:
            from .schedule import Schedule
            sched = Schedule(self.schedule, self._launched)
        self._launched += 1
        eng = Engine(self.mem, mod.module, kernel, grid, block, shared_bytes, list(args), observer,
                     self.instruction_budget, self.wall_clock_s, self.max_resident_blocks, mod.globals_at,
                     blocks=blocks, schedule=sched)
        if self.work_budget is not None:
            eng.work_budget = int(self.work_budget)
        stopped, issued = eng.run()
        found = by_cause(eng.findings_list() + (list(observer.findings) if observer is not None else []))
        if int(shared_bytes) > DYNAMIC_SHARED_DEFAULT:
            found.append(_large_shared(mod, kernel, int(shared_bytes)))
        self.findings.extend(found)
        return LaunchResult(found, counters, stopped, issued, tuple(getattr(eng, "printed", ())),
                            int(getattr(eng, "printed_cut", 0)),
                            tuple(sorted(sched.atomic_lines, key=lambda fl: (fl[0] or "", fl[1] or 0)))
                            if sched is not None else (), eng.work())


DYNAMIC_SHARED_DEFAULT = 48 * 1024  # bytes a launch may ask for without opting in

def by_cause(found: list[Finding]) -> list[Finding]:
    """The launch's findings, causes first (findings.cause_rank; found order inside a rank); a
    symptom in a launch that read unwritten memory says so."""
    found = sorted(found, key=lambda f: cause_rank(f.kind))
    garbage = next((f for f in found if f.kind in ("uninitialized-read", "cp-async-unwaited")), None)
    if garbage is None:
        return found
    note = (f" (this launch first read memory nothing had written, at {garbage.where()}: an address, branch or "
            "loop count computed from that garbage goes anywhere, so fix that read first)")
    return [replace(f, message=f.message + note) if f.kind in SYMPTOMS else f for f in found]


def _large_shared(mod: LoadedModule, kernel: Function, nbytes: int) -> Finding:
    """CUDA refuses a launch with more than 48 KB of dynamic shared memory unless the program first
    raised the kernel's limit; an emulator that ran it anyway says so."""
    lines = [i.line for i in mod.module.code[kernel.start:kernel.end] if i.line is not None]
    return Finding(kind="large-shared", file=mod.module.filename, line=min(lines) if lines else None,
                   space="shared", address=nbytes,
                   message=f"the launch of {kernel.name} asks for {nbytes} bytes of dynamic shared memory, over "
                           f"the {DYNAMIC_SHARED_DEFAULT} a CUDA launch gets by default: a CUDA program must call "
                           f"cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, {nbytes}) "
                           "first (kata's launch plan does that for you)")
