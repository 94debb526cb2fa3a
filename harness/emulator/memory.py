"""The memory model: global allocations with guard gaps, per-block shared windows, per-thread local.

Global memory is one growable byte array whose first byte sits at GLOBAL_BASE, so an address
becomes an index with one subtraction; typed views of the same bytes make a 4-byte load one numpy
gather. Allocations are 256-byte aligned like cudaMalloc's and separated by guard gaps, so a read
one element past the end lands in a gap and is reported instead of silently reading a neighbour.

Generic addresses (a pointer that does not say which state space it points into) are resolved by
window: shared memory appears at SHARED_WINDOW and local memory at LOCAL_WINDOW in the generic
space, as on the hardware, and everything else is global.
"""
from __future__ import annotations

import bisect

import numpy as np

from .findings import EmulatorError

GLOBAL_BASE = 0x7F00_0000_0000  # looks like a real device pointer; never 0, so NULL is out of bounds
SHARED_WINDOW = 0x7E00_0000_0000  # generic address of shared offset 0 (cvta.shared)
LOCAL_WINDOW = 0x7D00_0000_0000  # generic address of local offset 0 (cvta.local)
WINDOW_SIZE = 1 << 32  # shared and local offsets are 32-bit
ALIGN = 256  # cudaMalloc alignment
GUARD = 512  # bytes of no-man's land after every allocation
POISON = 0xFF  # bytes returned by bad loads and written into fresh shared memory (NaN, -1)

_VIEW_TYPES = (np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
               np.float16, np.float32, np.float64)


class ByteStore:
    """A byte array with cached typed views (all views share the bytes)."""

    def __init__(self, nbytes: int, fill: int = 0):
        self.resize(nbytes, fill)

    def resize(self, nbytes: int, fill: int = 0, keep: np.ndarray | None = None) -> None:
        nbytes = max(8, (nbytes + 7) // 8 * 8)
        self.buf = np.full(nbytes, fill, np.uint8) if fill else np.zeros(nbytes, np.uint8)
        if keep is not None:
            self.buf[: keep.size] = keep
        self.views = {np.dtype(t): self.buf.view(t) for t in _VIEW_TYPES}
        self.size = nbytes

    def view(self, dtype) -> np.ndarray:
        return self.views[np.dtype(dtype)]


class GlobalMemory(ByteStore):
    """cudaMalloc-style bump allocator over one byte array. No free: a grading run is short."""

    def __init__(self):
        super().__init__(1 << 20)
        self.starts: list[int] = []  # allocation start addresses, increasing
        self.ends: list[int] = []  # one past the last byte
        self.top = GUARD  # next free offset

    def alloc(self, nbytes: int) -> int:
        nbytes = max(1, int(nbytes))
        off = (self.top + ALIGN - 1) // ALIGN * ALIGN
        need = off + nbytes + GUARD
        if need > self.size:
            self.resize(max(need, 2 * self.size), keep=self.buf[: self.top])
        self.top = off + nbytes + GUARD
        self.starts.append(GLOBAL_BASE + off)
        self.ends.append(GLOBAL_BASE + off + nbytes)
        return GLOBAL_BASE + off

    def reserve(self, nbytes: int) -> None:
        """Room for nbytes more of allocations without a copy. The fresh bytes are calloc'd, so
        untouched pages of a large, mostly unread buffer cost address space, not memory."""
        if self.top + int(nbytes) > self.size:
            self.resize(self.top + int(nbytes), keep=self.buf[: self.top])

    def _host_range(self, addr: int, nbytes: int) -> int:
        k = bisect.bisect_right(self.starts, addr) - 1
        if k < 0 or addr + nbytes > self.ends[k]:
            raise EmulatorError(f"host access of {nbytes} bytes at {addr:#x} is outside every allocation")
        return addr - GLOBAL_BASE

    def write(self, addr: int, data) -> None:
        raw = np.ascontiguousarray(data).view(np.uint8).ravel()
        off = self._host_range(addr, raw.size)
        self.buf[off: off + raw.size] = raw

    def read(self, addr: int, dtype, count: int) -> np.ndarray:
        dtype = np.dtype(dtype)
        off = self._host_range(addr, dtype.itemsize * count)
        return self.buf[off: off + dtype.itemsize * count].copy().view(dtype)

    def memset(self, addr: int, byte: int, nbytes: int) -> None:
        off = self._host_range(addr, nbytes)
        self.buf[off: off + nbytes] = byte & 0xFF

    def bad_lanes(self, addrs: np.ndarray, size: int) -> np.ndarray | None:
        """None when every [a, a+size) lies inside one allocation (the fast, common case), else a
        bool mask of the lanes that touch a gap or no allocation at all."""
        if addrs.size == 0:
            return None
        lo, hi = int(addrs.min()), int(addrs.max()) + size
        k = bisect.bisect_right(self.starts, lo) - 1
        if k >= 0 and hi <= self.ends[k]:
            return None
        a = addrs.astype(np.uint64, copy=False)
        idx = np.searchsorted(np.asarray(self.starts, np.uint64), a, side="right").astype(np.int64) - 1
        ends = np.asarray([0] + self.ends, np.uint64)[idx + 1]
        return (idx < 0) | (a + np.uint64(size) > ends)

    def index(self, addrs: np.ndarray, shift: int) -> np.ndarray:
        """Element index into the typed view for (valid, aligned) addresses."""
        return ((addrs - np.uint64(GLOBAL_BASE)) >> np.uint64(shift)).astype(np.int64)


class Windows:
    """Shared memory of the resident blocks (one window per slot) and local memory per lane."""

    def __init__(self, slots: int, shared_bytes: int, lanes: int, local_bytes: int):
        self.shared_size = int(shared_bytes)  # bytes per block window, static + dynamic
        self.local_size = int(local_bytes)  # bytes per thread
        self.shared = ByteStore(max(8, slots * self.shared_size), POISON)
        self.local = ByteStore(max(8, lanes * self.local_size))

    def poison_shared(self, slots: np.ndarray) -> None:
        if self.shared_size == 0:
            return
        s = self.shared_size
        buf = self.shared.buf
        if len(slots) * s == buf.size:
            buf.fill(POISON)
        else:
            for k in np.asarray(slots).tolist():
                buf[k * s:(k + 1) * s] = POISON


def classify_generic(addrs: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Masks of generic addresses inside the shared and local windows (None when there are none)."""
    a = addrs.astype(np.uint64, copy=False)
    sh = (a - np.uint64(SHARED_WINDOW)) < np.uint64(WINDOW_SIZE)
    lo = (a - np.uint64(LOCAL_WINDOW)) < np.uint64(WINDOW_SIZE)
    return (sh if sh.any() else None), (lo if lo.any() else None)
