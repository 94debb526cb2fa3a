"""Theoretical occupancy from ptxas's resource report, and which resource limits it.

The same arithmetic as NVIDIA's occupancy calculator for compute capability 9.0, so the number
printed on the CPU emulator is the one a profiler would show on the H200. Registers are allocated
per warp in units of 256 and each of the SM's four sub-partitions holds a quarter of the register
file; shared memory is allocated in 128-byte units plus 1 KiB the runtime reserves per block.
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.backends.base import DeviceFacts
from harness.frontends.nvrtc import Resources
from harness.hardware import SHARED_RESERVED_PER_BLOCK as SMEM_RESERVED_PER_BLOCK
from harness.hardware import SUB_PARTITIONS  # each owns a quarter of the register file

REG_ALLOC_UNIT = 256  # registers, allocated per warp
MAX_REGS_PER_THREAD = 255
SMEM_ALLOC_UNIT = 128  # bytes

#: what may limit resident blocks per SM, in the order reported when several tie
LIMITERS = ("registers", "shared memory", "threads", "blocks per SM")


@dataclass(frozen=True)
class OccupancyResult:
    kernel: str  # PTX entry name
    block_threads: int  # threads per block of the launch this describes
    registers: int  # per thread, from ptxas
    shared_bytes: int  # per block: static (ptxas) + dynamic (the launch)
    spill_bytes: int  # spill stores + spill loads per thread; > 0 means local-memory traffic
    stack_bytes: int  # local memory per thread
    blocks_per_sm: int  # resident blocks per SM (0: the launch cannot run)
    active_warps: int  # warps resident per SM
    max_warps: int  # the SM's warp slots (64 on sm_90)
    fraction: float  # active_warps / max_warps
    limiters: tuple[str, ...]  # the resource(s) that set blocks_per_sm (see LIMITERS)
    limits: dict[str, int]  # blocks per SM each resource alone would allow
    note: str  # one sentence for the learner: what limits it and what would raise it

    def summary(self) -> str:
        return (f"{self.kernel}: {self.registers} regs, {self.shared_bytes} B shared, "
                f"{self.spill_bytes} B spills; occupancy {self.fraction:.0%} "
                f"({self.active_warps}/{self.max_warps} warps), limited by {' and '.join(self.limiters)}")


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


def blocks_by_registers(registers: int, warps_per_block: int, facts: DeviceFacts) -> int:
    if registers <= 0:
        return facts.max_blocks_per_sm
    if registers > MAX_REGS_PER_THREAD:
        return 0
    per_warp = _round_up(registers * facts.warp_size, REG_ALLOC_UNIT)
    warps = (facts.registers_per_sm // SUB_PARTITIONS // per_warp) * SUB_PARTITIONS
    return warps // warps_per_block


def blocks_by_shared(shared_bytes: int, facts: DeviceFacts) -> int:
    if shared_bytes > facts.max_shared_per_block_optin:
        return 0
    per_block = _round_up(shared_bytes, SMEM_ALLOC_UNIT) + SMEM_RESERVED_PER_BLOCK
    return facts.shared_per_sm // per_block


def blocks_per_sm(block_threads: int, shared_bytes: int, registers: int, facts: DeviceFacts) -> int:
    """Resident blocks per SM from the launch alone (no ptxas report: registers 0 if unknown), at
    least 1: the performance model's count where `occupancy` has no Resources to read."""
    warps = -(-max(1, int(block_threads)) // facts.warp_size)
    limits = (facts.max_threads_per_sm // facts.warp_size // warps,
              blocks_by_shared(shared_bytes, facts) if shared_bytes else facts.max_blocks_per_sm,
              blocks_by_registers(registers, warps, facts), facts.max_blocks_per_sm)
    return max(1, min(limits))


def occupancy(resources: Resources, block_threads: int, dynamic_shared: int,
              facts: DeviceFacts) -> OccupancyResult:
    """Theoretical occupancy of `resources.kernel` launched with `block_threads` threads per block
    and `dynamic_shared` bytes of dynamic shared memory on a device described by `facts`."""
    block_threads = max(1, int(block_threads))
    warps_per_block = -(-block_threads // facts.warp_size)
    max_warps = facts.max_threads_per_sm // facts.warp_size
    shared = int(resources.shared_bytes) + int(dynamic_shared)
    limits = {
        "registers": blocks_by_registers(resources.registers, warps_per_block, facts),
        "shared memory": blocks_by_shared(shared, facts),
        "threads": max_warps // warps_per_block if block_threads <= facts.max_threads_per_block else 0,
        "blocks per SM": facts.max_blocks_per_sm,
    }
    blocks = min(limits.values())
    limiters = tuple(k for k in LIMITERS if limits[k] == blocks)
    active = blocks * warps_per_block
    spills = int(resources.spill_stores) + int(resources.spill_loads)
    return OccupancyResult(
        kernel=resources.kernel, block_threads=block_threads, registers=int(resources.registers),
        shared_bytes=shared, spill_bytes=spills, stack_bytes=int(resources.stack_bytes),
        blocks_per_sm=blocks, active_warps=active, max_warps=max_warps,
        fraction=active / max_warps if max_warps else 0.0, limiters=limiters, limits=limits,
        note=_note(limiters, blocks, limits, resources, warps_per_block, spills, facts))


def _note(limiters, blocks, limits, res, warps_per_block, spills, facts) -> str:
    if blocks == 0:
        what = limiters[0]
        return (f"this launch cannot run: {what} exceed what one SM has "
                f"({res.registers} registers/thread, {warps_per_block} warps/block)")
    head = limiters[0]
    if blocks * warps_per_block >= facts.max_threads_per_sm // facts.warp_size:
        return "full occupancy: the SM holds its maximum number of warps" + (
            f"; {spills} B of register spills per thread go to local memory" if spills else "")
    if head == "registers":
        tip = (f"{res.registers} registers per thread; fewer (__launch_bounds__, less unrolling) "
               f"would fit more warps")
    elif head == "shared memory":
        tip = "shared memory per block; smaller tiles or fewer stages would fit more blocks"
    elif head == "threads":
        tip = "threads per SM: the SM is full of warps, which is the most it can hold"
    else:
        tip = (f"the {facts.max_blocks_per_sm} blocks-per-SM cap; blocks of "
               f"{warps_per_block * facts.warp_size} threads are too small to fill the SM")
    if spills:
        tip += f"; {spills} B of register spills per thread go to local memory"
    return f"limited by {tip}"


def occupancy_table(resources: dict[str, Resources], launches, facts: DeviceFacts) -> list[OccupancyResult]:
    """One result per distinct (kernel, block threads, dynamic shared) in `launches`, an iterable of
    (kernel name, block threads, dynamic shared bytes) as a launch plan issued them. Kernels ptxas
    did not report (e.g. a name that resolved to a mangled entry) are matched by base name."""
    seen: dict[tuple[str, int, int], OccupancyResult] = {}
    for name, threads, dyn in launches:
        res = resources.get(name) or next((r for k, r in resources.items() if _base_name(k) == name), None)
        if res is None:
            continue
        key = (res.kernel, int(threads), int(dyn))
        if key not in seen:
            seen[key] = occupancy(res, threads, dyn, facts)
    return list(seen.values())


def _base_name(entry: str) -> str:
    """`_Z6reducePKfPfi` -> `reduce`: the identifier after _Z<len>."""
    if not entry.startswith("_Z"):
        return entry
    digits = ""
    for ch in entry[2:]:
        if not ch.isdigit():
            break
        digits += ch
    return entry[2 + len(digits):2 + len(digits) + int(digits)] if digits else entry
