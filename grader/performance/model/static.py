"""What the instruction stream says before it runs: the pipe each PTX instruction issues to, and
how many loads a warp has in flight at once.

Loads in flight: ptxas schedules loads as early as their address allows, inside a basic block
and never across a barrier, so the loads of one block whose addresses do not come from another
load of the same block leave together (one round trip); a load whose address needs a loaded
value (x[col[j]]) waits a round trip more. An unrolled loop body with four float4 loads is one
round trip of four loads; the same loop not unrolled is four round trips of one.
"""
from __future__ import annotations

from harness.emulator import instructions  # noqa: F401  (the builders fill the instruction registry)
from harness.emulator.ops import pipe_of

# What ends a basic block for the loads-in-flight count (not pipes: those are the registry's)
_BRANCH = {"bra", "ret", "exit", "call", "brx"}
_BOUNDARY = {"bar", "barrier", "membar", "fence"}


# Hopper. What issues: wgmma.mma_async to the tensor pipe (a warpgroup's m64nNk16 is 4 warps'
# worth of work, see async_unit); its fence/commit/wait are bookkeeping; mbarrier operations are
# shared-memory atomics (lsu); cp.async.bulk{,.tensor} and cp.reduce.async.bulk issue once from
# one thread (lsu) and then move their bytes in the TMA unit, at its bandwidth, not per lane;
# barrier.cluster is a barrier; mapa an address computation; setmaxnreg a register handover
# (their pipes are declared with their builders, harness/emulator/ops_{cluster,mbarrier,tma,wgmma}.py).


def async_unit(opcode: str) -> str | None:
    """The asynchronous unit an instruction hands its work to, which the model times apart from
    the issuing pipe: "tma" (cp.async.bulk / .tensor / cp.reduce.async.bulk: bytes at the TMA's
    bandwidth), "wgmma" (wgmma.mma_async: warpgroup tensor throughput per SM), or None."""
    parts = opcode.split(".")
    if parts[0] == "cp" and "bulk" in parts and "commit_group" not in parts and "wait_group" not in parts:
        return "tma"
    if parts[0] == "wgmma" and "mma_async" in parts:
        return "wgmma"
    return None


def pipe(opcode: str) -> str:
    """The pipe a PTX instruction issues to: fp32 | fp64 | int | sfu | lsu | shuffle | branch |
    tensor | other (bookkeeping ptxas mostly folds away), as its emulator @builder declares it;
    wgmma's fence, commit_group and wait_group are bookkeeping, only its mma_async issues work."""
    parts = opcode.split(".")
    if parts[0] == "wgmma" and "mma_async" not in parts:
        return "other"
    return pipe_of(opcode)


def _regs(op) -> list[str]:
    if op.kind == "reg" and op.name:
        return [op.name]
    if op.kind == "vec":
        return [i.name for i in op.items if i.kind == "reg" and i.name]
    if op.kind == "addr" and op.name:
        return [op.name]
    return []


def _space(inst) -> str | None:
    """Where a load, or an atomic whose old value comes back (atom: a round trip to the L2's
    atomic unit or shared memory, unlike red), waits."""
    if inst.op not in ("ld", "ldu", "atom"):
        return None
    if "shared" in inst.mods:
        return "shared"
    if "global" in inst.mods or not any(m in inst.mods for m in ("param", "local", "const")):
        return "global"
    return None


def load_batches(code, functions) -> dict[int, tuple[str, int, int, int]]:
    """{pc of a global or shared load: (space, depth, loads of that space at that depth in its
    region, instructions between the load and the first use of its value)}. Depth 1 loads leave
    together at the region's start; depth 2 wait for one. Regions are split at loop edges
    (backward branches and their targets) and barriers: ptxas if-converts or schedules across
    short forward branches (a guarded `v[k] = i < n ? x[i] : 0` in an unrolled loop is one region)."""
    out: dict[int, tuple[str, int, int, int]] = {}
    for f in functions:
        leaders = {f.start}
        for inst in code[f.start:f.end]:
            if inst.op in _BRANCH and isinstance(inst.target, int) and inst.target <= inst.pc:
                leaders.add(inst.pc + 1)
                leaders.add(inst.target)
            elif inst.op in _BOUNDARY or inst.op in ("ret", "exit"):
                leaders.add(inst.pc)
                leaders.add(inst.pc + 1)
        starts = sorted(p for p in leaders if f.start <= p < f.end) + [f.end]
        for a, b in zip(starts, starts[1:]):
            depth_of: dict[str, int] = {}  # register -> load depth of the value it holds (0: none)
            loaded_by: dict[str, int] = {}  # register -> pc of the load that wrote it
            loads: list[tuple[int, str, int]] = []
            first_use: dict[int, int] = {}
            for inst in code[a:b]:
                srcs = [r for o in (inst.ops if inst.op in ("st", "red") else inst.ops[1:]) for r in _regs(o)]
                for r in srcs:
                    src = loaded_by.get(r)
                    if src is not None and src not in first_use:
                        first_use[src] = inst.pc
                d = max((depth_of.get(r, 0) for r in srcs), default=0)
                space = _space(inst)
                if space is not None:
                    d += 1
                    loads.append((inst.pc, space, d))
                if inst.op not in ("st", "red") and inst.ops:
                    for r in _regs(inst.ops[0]):
                        depth_of[r] = d
                        if space is not None:
                            loaded_by[r] = inst.pc
                        else:
                            loaded_by.pop(r, None)
            count: dict[tuple[str, int], int] = {}
            for _, space, d in loads:
                count[(space, d)] = count.get((space, d), 0) + 1
            for pc, space, d in loads:
                out[pc] = (space, d, count[(space, d)], first_use.get(pc, b) - pc)
    return out


def anchors(code, functions) -> dict[int, int]:
    """{pc: the pc whose count bounds it}: the back-edge branch of the innermost loop holding the
    pc (one execution per iteration), else its function's first instruction (once per thread).
    A guarded instruction (an atomic under `if (hist[i])`) keeps its share of its anchor's count
    when counts are extrapolated, so a count that saturates cannot outgrow its loop."""
    out: dict[int, int] = {}
    for f in functions:
        loops = sorted(((inst.target, inst.pc) for inst in code[f.start:f.end]
                        if inst.op in _BRANCH and isinstance(inst.target, int) and f.start <= inst.target <= inst.pc),
                       key=lambda lp: lp[1] - lp[0])
        for pc in range(f.start, f.end):
            out[pc] = next((b for a, b in loops if a <= pc <= b), f.start)
    return out
