"""The machine a launch plan drives: one small interface, two implementations.

`harness/backends/cpu.py` implements it on the emulator, `harness/backends/gpu.py` with CuPy. The grader talks to a
Backend; the learner's launch.py talks to `harness.backends.plan.Plan`, which wraps a Backend and checks
every call. Buffers are opaque handles: the plan can pass them on, never read their contents.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from harness.hardware import H200, DeviceFacts  # noqa: F401  (re-exported: the backends' facts)


@dataclass(frozen=True)
class Buffer:
    """An opaque device buffer: a handle, an element type and a count (never the contents)."""

    handle: object  # backend-specific (an int address on the emulator, a cupy array on the GPU)
    dtype: np.dtype
    size: int  # elements
    offset: int = 0  # elements from the start of the allocation (for view())

    @property
    def nbytes(self) -> int:
        return self.size * np.dtype(self.dtype).itemsize

    def view(self, offset: int, count: int | None = None) -> "Buffer":
        """The buffer `offset` elements in, like pointer arithmetic in C."""
        offset = int(offset)
        count = self.size - offset if count is None else int(count)
        if offset < 0 or count < 0 or offset + count > self.size:
            raise ValueError(f"view({offset}, {count}) is outside a buffer of {self.size} elements")
        return Buffer(self.handle, self.dtype, count, self.offset + offset)

    def __repr__(self) -> str:
        return f"<device buffer {np.dtype(self.dtype).name}[{self.size}]>"


@dataclass(frozen=True)
class KernelParam:
    name: str  # PTX parameter name (e.g. reduce_param_0)
    type: str  # PTX type: u64 (pointers), s32, u32, f32, f64, ...


class Backend(ABC):
    """One machine. Errors a learner caused raise harness.backends.plan.LaunchError (via Plan)."""

    name: str  # "cpu" | "gpu"
    facts: DeviceFacts

    @abstractmethod
    def load(self, ptx: str, cubin: bytes | None, filename: str) -> None:
        """Load the compiled module (PTX on the emulator, cubin on the GPU)."""

    @abstractmethod
    def kernel_params(self, name: str) -> list[KernelParam] | None:
        """The entry's parameters, or None when the module has no kernel of that name."""

    @abstractmethod
    def alloc(self, count: int, dtype) -> Buffer: ...

    @abstractmethod
    def upload(self, array: np.ndarray) -> Buffer: ...

    @abstractmethod
    def download(self, buf: Buffer) -> np.ndarray: ...

    @abstractmethod
    def memset(self, buf: Buffer, byte: int) -> None: ...

    @abstractmethod
    def launch(self, name: str, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared: int, args: list) -> None:
        """args: Buffers and numbers already converted to numpy scalars of the parameter types."""

    @abstractmethod
    def synchronize(self) -> None: ...

    @abstractmethod
    def equal(self, a: Buffer, b: Buffer) -> bool:
        """Whether two buffers hold the same bytes (a different size is never equal), compared
        where the buffers live: the perf stage's check after timing, against a copy made after the
        checked run, moves no output to the host unless something changed."""

    def copy(self, dst: Buffer, src: Buffer) -> None:
        """Copy min(dst, src) bytes from src to dst, on the device (in-out buffers, output copies)."""
        raise NotImplementedError(f"{type(self).__name__} cannot copy between buffers")

    def free(self, buf: Buffer) -> None:  # optional: backends may free on close instead
        return None

    def close(self) -> None:
        return None
