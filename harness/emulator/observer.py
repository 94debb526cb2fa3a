"""The hooks the engine calls while it runs a kernel; the sanitizer and the counters implement them.

Every array argument covers the active lanes of one issued PC group, which may span warps and
blocks: `blocks` are linear block ids, `tids` linear thread ids inside the block (warp = tid // 32).
The engine skips all hooks when no observer is attached, so they cost nothing in a fast run.
"""
from __future__ import annotations

import numpy as np

from .findings import Finding


class Observer:
    """Base class: every hook is a no-op, so an observer overrides only what it needs."""

    findings: list[Finding] = []

    def on_kernel_start(self, kernel: str, grid, block, shared_bytes: int) -> None:
        """A launch begins: grid and block are (x, y, z); shared_bytes is static + dynamic."""

    def on_block_start(self, blocks: np.ndarray) -> None:
        """These blocks became resident (their shared memory is poisoned and unwritten)."""

    def on_issue(self, inst, blocks: np.ndarray, tids: np.ndarray) -> None:
        """`inst` (.opcode, .pc, .file, .line) issues for these lanes (guard predicate applied)."""

    def on_memory(self, inst, space: str, op: str, blocks, tids, addrs, size: int, values=None) -> None:
        """Before an access. space: global|shared|local; op: ld|st|atom; addrs: uint64 byte
        addresses (shared and local: offsets inside the block's / thread's window); size: bytes
        per lane (a v4.f32 access is one call with size 16). values: only for shared stores,
        passed by keyword: the stored components (one array or scalar per vector element)."""

    def on_shared_init(self, blocks: np.ndarray, offset: int, nbytes: int) -> None:
        """These bytes of the blocks' shared memory hold defined values from the start (the
        reserved area cooperative groups use), written by no thread."""

    def on_async_copy(self, inst, blocks, tids, addrs, size: int) -> None:
        """A cp.async issued: these shared bytes will change when the thread waits for it (its
        landing is an on_memory store by the same instruction)."""

    def on_bulk_read(self, inst, block: int, tid: int, sectors: np.ndarray) -> None:
        """A tensor or bulk copy (TMA) issued by one thread reads these 32-byte global sectors
        (their byte addresses, uint64) for the block: the copy engine's traffic, which the
        counters and the cache model count as one request; the sanitizer checks the copy itself."""

    def on_barrier(self, blocks: np.ndarray) -> None:
        """bar.sync / __syncthreads completed for these blocks."""

    def on_fence(self, inst, blocks: np.ndarray, tids: np.ndarray) -> None:
        """A memory fence wider than the block (membar.gl, __threadfence(), fence.*.gpu/.sys) ran
        for these lanes."""

    def on_warp_sync(self, blocks: np.ndarray, warps: np.ndarray, masks: np.ndarray) -> None:
        """__syncwarp (bar.warp.sync) completed: one entry per warp, its warp index inside the block
        and the member mask of the lanes that synchronised."""

    def on_block_end(self, blocks: np.ndarray) -> None:
        """Every thread of these blocks exited; their slots may be reused by later blocks."""

    def on_kernel_end(self) -> None:
        """The launch finished (or was stopped)."""


def wants_issue(obs) -> bool:
    """Whether on_issue does anything for this observer (or any observer of a Fanout): the engine
    skips the hook, and the per-lane gathers of its arguments, for every instruction when not."""
    if obs is None:
        return False
    if isinstance(obs, Fanout):
        return bool(obs.issuing)
    return type(obs).on_issue is not Observer.on_issue


class Fanout(Observer):
    """Forwards every hook to several observers, in order; findings are all of theirs."""

    def __init__(self, observers: list[Observer]):
        self.observers = list(observers)
        self.issuing = [o for o in self.observers if wants_issue(o)]  # on_issue goes to these only

    @property
    def findings(self) -> list[Finding]:  # type: ignore[override]
        return [f for o in self.observers for f in o.findings]

    def on_kernel_start(self, kernel, grid, block, shared_bytes):
        for o in self.observers:
            o.on_kernel_start(kernel, grid, block, shared_bytes)

    def on_block_start(self, blocks):
        for o in self.observers:
            o.on_block_start(blocks)

    def on_issue(self, inst, blocks, tids):
        for o in self.issuing:
            o.on_issue(inst, blocks, tids)

    def on_memory(self, inst, space, op, blocks, tids, addrs, size, values=None):
        for o in self.observers:
            if values is None:
                o.on_memory(inst, space, op, blocks, tids, addrs, size)
            else:
                o.on_memory(inst, space, op, blocks, tids, addrs, size, values=values)

    def on_shared_init(self, blocks, offset, nbytes):
        for o in self.observers:
            o.on_shared_init(blocks, offset, nbytes)

    def on_async_copy(self, inst, blocks, tids, addrs, size):
        for o in self.observers:
            o.on_async_copy(inst, blocks, tids, addrs, size)

    def on_bulk_read(self, inst, block, tid, sectors):
        for o in self.observers:
            o.on_bulk_read(inst, block, tid, sectors)

    def on_barrier(self, blocks):
        for o in self.observers:
            o.on_barrier(blocks)

    def on_fence(self, inst, blocks, tids):
        for o in self.observers:
            o.on_fence(inst, blocks, tids)

    def on_warp_sync(self, blocks, warps, masks):
        for o in self.observers:
            o.on_warp_sync(blocks, warps, masks)

    def on_block_end(self, blocks):
        for o in self.observers:
            o.on_block_end(blocks)

    def on_kernel_end(self):
        for o in self.observers:
            o.on_kernel_end()
