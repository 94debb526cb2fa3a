"""The CPU backend: the launch plan's calls executed by kata's emulator on the PTX NVRTC produced.

It reports the H200's device facts so launch plans size grids the same way on a laptop as on the
grading GPU. Findings and memory counters are collected across every launch of a run, because a
plan may launch several kernels (scan, BFS) and the learner wants one report.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from harness.backends.base import H200, Backend, Buffer, KernelParam
from harness.backends.gpu import base_name

FACTS = dataclasses.replace(H200, name="kata CPU emulator (H200 model)")
# issued instructions a launch may take under another schedule (a wait that never ends stops there);
# the largest launch of a solution's sanitizer case takes 27 000 under a schedule (attention-backward)
SCHEDULE_BUDGET = 1_000_000


@dataclasses.dataclass(frozen=True)
class CounterSummary:
    """Counters summed over a run's launches (harness.emulator.counters.Tally rows)."""

    total: object  # Tally of everything
    per_line: dict  # {line: Tally} for the learner's file (header lines count in total only)
    mix: dict  # warp instructions per opcode family
    kernels: tuple[str, ...]  # the kernels launched, in order


class CpuBackend(Backend):
    name = "cpu"
    facts = FACTS

    def __init__(self, sanitize: bool = False, counters: bool = False,
                 instruction_budget: int = 2_000_000_000, wall_clock_s: float = 60.0, observers=None,
                 schedule: int = 0):
        from harness.emulator import Emulator

        # schedule > 0: blocks and atomics in another legal order (the grade's order check); a
        # kernel that waits for blocks that schedule keeps waiting is stopped by a budget of issues
        # (the same on a busy machine as on an idle one), not by the wall clock
        self._emu = Emulator(sanitize=sanitize, counters=counters, observers=observers,
                             instruction_budget=min(instruction_budget, SCHEDULE_BUDGET) if schedule
                             else instruction_budget, wall_clock_s=wall_clock_s, schedule=schedule)
        self.atomic_order: list = []  # (file, line) of atomics whose returned values the schedule moved
        # sample(kernel, grid, block) -> linear block ids to run, or None for the whole grid: the
        # performance model runs a sample of the blocks of a bench-shape launch
        self.sample = None
        self._module = None
        self._filename = "kernel.cu"
        self.findings: list = []  # every Finding of every launch, in order
        self.printed: list = []  # (kernel, printf lines, lines cut) per launch that printed
        self.stopped = False  # a launch was cut short (watchdog, deadlock)
        # run_budget: emulated work (LaunchResult.work: issues plus weighted lanes) for all launches of the run
        # together, or None; counted work, so where a run stops never depends on the machine's load
        self.run_budget: int | None = None
        self.issued = 0  # instruction issues of every launch so far
        self.work = 0  # emulated work (the emulator's LaunchResult.work) of every launch so far
        self.out_of_budget = False  # a launch was cut (or skipped) because run_budget ran out
        self._counters: list = []  # one emulator Counters per launch

    # -- module --------------------------------------------------------------------------------
    def load(self, ptx: str, cubin: bytes | None, filename: str) -> None:
        self._filename = filename
        self._module = self._emu.load(ptx, filename=filename)

    def _entry(self, name: str) -> str | None:
        kernels = self._module.kernels
        if name in kernels:
            return name
        matches = [e for e in kernels if base_name(e) == name]
        return matches[0] if len(matches) == 1 else None

    def kernel_names(self) -> list[str]:
        return sorted(base_name(e) for e in self._module.kernels)

    def kernel_params(self, name: str) -> list[KernelParam] | None:
        entry = self._entry(name)
        if entry is None:
            return None
        return [KernelParam(p.name, p.type) for p in self._module.kernels[entry].params]

    # -- memory --------------------------------------------------------------------------------
    def alloc(self, count: int, dtype) -> Buffer:
        """gpu.empty: garbage on a GPU, so the sanitizer reports a kernel reading it unwritten."""
        buf = self._alloc(count, dtype)
        self.mark_unwritten(buf)
        return buf

    def _alloc(self, count: int, dtype) -> Buffer:
        dtype = np.dtype(dtype)
        # A zero-element buffer still needs an address a kernel can be handed (and must not touch).
        return Buffer(self._emu.alloc(max(count * dtype.itemsize, 1)), dtype, count)

    def mark_unwritten(self, buf: Buffer) -> None:
        """The buffer's bytes count as never written (a poisoned output) until something writes them."""
        if self._emu.sanitize and buf.nbytes:
            self._emu.mark_unwritten(self._address(buf), buf.nbytes)

    def reserve(self, nbytes: int) -> None:
        """Make room for nbytes of allocations at once (bench-shape buffers, mostly never touched)."""
        self._emu.mem.reserve(int(nbytes))

    def _address(self, buf: Buffer) -> int:
        return int(buf.handle) + buf.offset * np.dtype(buf.dtype).itemsize

    def upload(self, array: np.ndarray) -> Buffer:
        array = np.ascontiguousarray(array)
        buf = self._alloc(array.size, array.dtype)
        if array.size:
            self._emu.write(buf.handle, array.reshape(-1))
        return buf

    def download(self, buf: Buffer) -> np.ndarray:
        if buf.size == 0:
            return np.empty(0, buf.dtype)
        return np.asarray(self._emu.read(self._address(buf), np.dtype(buf.dtype), buf.size)).copy()

    def memset(self, buf: Buffer, byte: int) -> None:
        if buf.nbytes:
            self._emu.memset(self._address(buf), byte, buf.nbytes)

    def copy(self, dst: Buffer, src: Buffer) -> None:
        n = min(dst.nbytes, src.nbytes)
        if n:
            self._emu.write(self._address(dst), self._emu.read(self._address(src), np.uint8, n))

    def equal(self, a: Buffer, b: Buffer) -> bool:
        if a.nbytes != b.nbytes:
            return False
        return not a.nbytes or np.array_equal(self._emu.read(self._address(a), np.uint8, a.nbytes),
                                              self._emu.read(self._address(b), np.uint8, b.nbytes))

    def tensor_map(self, buf: Buffer, fields: dict) -> bytes:
        """The emulator's 128-byte tensor map for a tensor in buf (harness/emulator/tensormap.py)."""
        from harness.emulator.tensormap import encode_tiled

        return encode_tiled(fields["dtype"], self._address(buf), fields["global_dim"], fields["global_strides"],
                            fields["box_dim"], fields["element_strides"], swizzle=fields["swizzle"],
                            oob_fill=fields["oob_fill"])

    # -- launches ------------------------------------------------------------------------------
    def launch(self, name, grid, block, shared, args) -> None:
        values = [self._address(a) if isinstance(a, Buffer) else a for a in args]
        blocks = self.sample(name, tuple(grid), tuple(block)) if self.sample is not None else None
        if self.run_budget is not None:
            left = self.run_budget - self.work
            if left <= 0:  # the budget is spent: this launch is not run at all
                self.stopped = self.out_of_budget = True
                return
            self._emu.work_budget = left
        result = self._emu.launch(self._module, self._entry(name) or name, grid=tuple(grid),
                                  block=tuple(block), shared_bytes=int(shared), args=values, blocks=blocks)
        self.findings.extend(result.findings)
        self.atomic_order.extend(x for x in result.atomic_order if x not in self.atomic_order)
        if result.printed or result.printed_cut:  # device printf, per launch in launch order
            self.printed.append((name, result.printed, result.printed_cut))
        self.stopped = self.stopped or bool(result.stopped)
        self.issued += int(result.instructions)
        self.work += int(result.work)
        if self.run_budget is not None and result.stopped and self.work > self.run_budget:
            self.out_of_budget = True
        if result.counters is not None:
            self._counters.append((name, result.counters))

    def synchronize(self) -> None:
        return None

    def counters(self) -> CounterSummary | None:
        """The run's counters summed over launches, or None when counters were off."""
        if not self._counters:
            return None
        from harness.emulator.counters import Tally

        fields = [f.name for f in dataclasses.fields(Tally)][2:]

        def row(tally) -> np.ndarray:
            return np.array([getattr(tally, f) for f in fields], np.int64)

        total = np.zeros(len(fields), np.int64)
        lines: dict[tuple, np.ndarray] = {}
        mix: dict[str, int] = {}
        for _, c in self._counters:
            total += row(c.total)  # every instruction, header code included
            for key, tally in c.per_location.items():
                lines[key] = lines.get(key, 0) + row(tally)
            for fam, count in c.mix.items():
                mix[fam] = mix.get(fam, 0) + count
        own = self._filename
        per_line = {key[1]: Tally(key[0], key[1], *(int(v) for v in row)) for key, row in sorted(
            lines.items(), key=lambda kv: kv[0][1] or 0) if key[1] is not None and _same_file(key[0], own)}
        return CounterSummary(Tally(None, None, *(int(v) for v in total)), per_line,
                              dict(sorted(mix.items(), key=lambda kv: -kv[1])),
                              tuple(name for name, _ in self._counters))


def _same_file(a: str | None, b: str) -> bool:
    # NVRTC writes the file as it was named at compile time, sometimes behind a folder.
    return a is not None and a.replace("\\", "/").rsplit("/", 1)[-1] == b
