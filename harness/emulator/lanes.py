"""The state of one launch: resident blocks and their lanes, registers, windows and findings.

It is longer than ~300 lines: the per-lane arrays, block admission and retirement, and the
register views all index the same lane layout, and are kept together so that layout has one home.

A launch runs `R` resident blocks ("slots") of `T` threads each, so `N = R*T` lanes. Every per-
lane quantity is a numpy array of length N indexed by lane: registers (raw bits), %tid/%ctaid,
the block each lane belongs to, its shared and local window bases. When a block finishes, the next
block of the grid takes over its slot, like a GPU's block scheduler.
"""
from __future__ import annotations

import time

import numpy as np

from harness.hardware import H200, SHARED_RESERVED_PER_BLOCK

from .findings import EmulatorError, Finding, UnsupportedPTX
from .memory import LOCAL_WINDOW, SHARED_WINDOW, Windows
from .ops import NP, const, reg_view, scalar
from .ptx import TYPE_BITS

H200_SMS, MAX_THREADS_SM, MAX_BLOCKS_SM, SHARED_SM = H200.sm_count, H200.max_threads_per_sm, H200.max_blocks_per_sm, \
    H200.shared_per_sm
#: each SM's %clock64 when the launch began: SMs power up at different times, so their counters differ
_SM_CLOCK_START = (np.arange(H200_SMS, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) >> np.uint64(24)) \
    + np.uint64(1 << 36)
LANE_BYTES_BUDGET = 384 << 20  # registers + local memory of the resident lanes
RESERVED_SMEM = SHARED_RESERVED_PER_BLOCK  # the system's shared memory per block on sm_90, two areas of 512 bytes


def _dims(v) -> tuple[int, int, int]:
    v = (tuple(int(x) for x in v) if hasattr(v, "__len__") else (int(v),)) + (1, 1, 1)
    return v[0], v[1], v[2]


_GEOMETRY: dict = {}  # (R, block) -> the per-lane arrays that depend only on the launch shape


def _geometry(R: int, block: tuple[int, int, int]) -> tuple:
    """Lane ids, slots, thread ids, lane bits and warps of R resident blocks, computed once per
    launch shape (a grader launches the same shape many times) and read-only, since launches
    share them."""
    key = (R, block)
    if key not in _GEOMETRY:
        T = block[0] * block[1] * block[2]
        WPB = (T + 31) // 32
        lane = np.arange(R * T, dtype=np.int64)
        slot, tid = lane // T, lane % T
        bx, by = block[0], block[1]
        tid_xyz = [(tid % bx).astype(np.uint32), ((tid // bx) % by).astype(np.uint32),
                   (tid // (bx * by)).astype(np.uint32)]
        laneid = (tid % 32).astype(np.uint32)
        lbit = (np.uint32(1) << laneid).astype(np.uint32)
        gwarp = slot * WPB + tid // 32
        # Member masks of the warps that exist: full, but for a block's last, partial warp.
        exists = np.tile(np.array([(1 << min(32, T - 32 * w)) - 1 for w in range(WPB)], np.uint64), R)
        arrays = (lane, slot, tid, *tid_xyz, laneid, lbit, gwarp, exists)
        for a in arrays:
            a.flags.writeable = False
        if len(_GEOMETRY) >= 2:
            _GEOMETRY.clear()
        _GEOMETRY[key] = (lane, slot, tid, tid_xyz, laneid, lbit, gwarp, exists)
    return _GEOMETRY[key]


class LaunchState:
    def __init__(self, mem, module, kernel, grid, block, shared_bytes, args, observer,
                 budget, wall_clock_s, max_resident_blocks, globals_at, blocks=None, schedule=None):
        self.mem, self.module, self.kernel = mem, module, kernel
        self.schedule = schedule  # schedule.Schedule: another legal block and atomic order, or None
        self.code = module.code
        self.grid, self.block = _dims(grid), _dims(block)
        self.T = self.block[0] * self.block[1] * self.block[2]
        self.nblocks = self.grid[0] * self.grid[1] * self.grid[2]
        if not 0 < self.T <= 1024:
            raise EmulatorError(f"block {self.block} has {self.T} threads; a block holds 1 to 1024")
        if self.nblocks <= 0:
            raise EmulatorError(f"grid {self.grid} has no blocks")
        # blocks: run only these linear block ids (the performance model's sample of a grid too
        # large to emulate whole); %nctaid and %ctaid stay those of the whole grid.
        self.block_ids = None if blocks is None else np.unique(np.asarray(blocks, np.int64))
        if self.block_ids is not None:
            if self.block_ids.size == 0 or self.block_ids[0] < 0 or self.block_ids[-1] >= self.nblocks:
                raise EmulatorError(f"block sample outside the grid's {self.nblocks} blocks")
        self.cluster = tuple(getattr(kernel, "cluster", (1, 1, 1)))
        self.cs = self.cluster[0] * self.cluster[1] * self.cluster[2]
        if self.cs > 1:  # blocks start cluster by cluster, ranks in order (ops_cluster.py)
            from .ops_cluster import cluster_order
            self.block_ids = cluster_order(self.grid, self.cluster, self.block_ids)
        self.to_run = self.nblocks if self.block_ids is None else int(self.block_ids.size)
        self.observer, self.budget, self.wall_clock_s = observer, budget, wall_clock_s
        self.globals_at = globals_at
        self.funcs = self._reachable(kernel)
        self.code_used = [i for f in self.funcs for i in module.code[f.start:f.end]]
        self._layout_shared(int(shared_bytes))
        self._layout_local()
        self._params = self._pack_args(args)
        lane_bytes = sum(max(1, TYPE_BITS[t]) for f in self.funcs for t in f.regs.values()) // 8 + 8
        lane_bytes += self.local_size + sum(v.size for f in self.funcs if not f.entry for v in f.vars.values())
        lane_bytes += sum(v.size for v in self.kernel.vars.values() if v.space == "param" and "#" in v.name)
        per_sm = min(MAX_BLOCKS_SM, MAX_THREADS_SM // ((self.T + 31) // 32 * 32))
        if self.shared_size:
            per_sm = min(per_sm, SHARED_SM // self.shared_size)
        r = H200_SMS * max(1, per_sm) if max_resident_blocks is None else int(max_resident_blocks)
        r = min(r, max(1, LANE_BYTES_BUDGET // (lane_bytes * self.T)))
        self.order = None  # the order blocks start in (None: increasing)
        if schedule is not None:
            r = schedule.residency(r, self.to_run)
            self.order = schedule.block_order(self.to_run)
        self.R = R = max(1, min(r, self.to_run))
        if self.cs > 1:  # a cluster's blocks are resident together: whole clusters of slots
            self.R = R = max(self.cs, R // self.cs * self.cs)
        self.N = N = R * self.T
        self.WPB = (self.T + 31) // 32
        self.NW = R * self.WPB
        (lane, self.lane_slot, self.lane_tid, self.tid_xyz, self.laneid, self.lbit, self.gwarp,
         self.warp_exists) = _geometry(R, self.block)
        self.every = lane  # every lane index; lane sets that fill a range are views of it
        # under a schedule, the lanes of a block's second wave of warps (schedule.late_warps): they
        # wait in `held` until nothing else can run (engine._release)
        late = schedule.late_warps(self.WPB) if schedule is not None else None
        self.late = None if late is None else late[self.lane_tid // 32]
        self.held: dict[int, np.ndarray] = {}
        self.ctaid_xyz = [np.zeros(N, np.uint32) for _ in range(3)]
        self.lane_block = np.zeros(N, np.int64)
        self.slot_block = np.full(R, -1, np.int64)
        self.sh_base = self.lane_slot * self.shared_size
        self.loc_base = lane * self.local_size
        self.win = Windows(R, self.shared_size, N, self.local_size)
        self.regs: dict[str, np.ndarray] = {}
        self._views: dict = {}
        # 32-bit registers are the rows of one (count, N) array, so a run of f32 arithmetic can
        # be executed in one compiled pass over row indices (fused.py); each row is the register.
        wide32 = list(dict.fromkeys(n for f in self.funcs for n, t in f.regs.items() if TYPE_BITS[t] == 32))
        self.row32 = {name: i for i, name in enumerate(wide32)}
        self.file32 = np.zeros((len(wide32), N), np.uint32) if wide32 else None
        self.file32f = self.file32.view(np.float32) if wide32 else None
        for f in self.funcs:
            for name, t in f.regs.items():
                w = TYPE_BITS[t]
                if w == 32:
                    self.regs[name] = self.file32[self.row32[name]]
                else:
                    self.regs[name] = np.zeros(N, bool if w == 1 else np.dtype(f"u{max(1, w // 8)}"))
                    self.row32.pop(name, None)  # one name, two widths in two functions: the last wins
        self.pbuf = {v.name: np.zeros((N, max(1, v.size)), np.uint8)
                     for f in self.funcs for v in f.vars.values() if v.space == "param"
                     and not (f.entry and "#" not in v.name)}
        depth = len(self.funcs)
        self.stack = np.zeros((N, depth), np.int32)
        self.depth = np.zeros(N, np.int32)
        self.exited = np.zeros(R, np.int64)
        # Per lane, for telling an early return from a skipped barrier (engine._check_barriers):
        # whether it exited, and the PC of its last store or atomic (kept only with an observer).
        self.gone = np.zeros(N, bool) if observer is not None else None
        self.last_mem = np.full(N, -1, np.int64) if observer is not None else None
        self.arrived: dict[int, np.ndarray] = {}
        self.runnable: dict[int, np.ndarray] = {}
        self.bar_waiting: dict[int, np.ndarray] = {}
        self.ws_waiting: dict[int, np.ndarray] = {}
        self.found: dict[tuple, Finding] = {}
        self.stopped, self.issued, self.next_block, self.clock = False, 0, 0, 0
        self.poll_failed = False  # the last mbarrier poll (try_wait / test_wait) found no phase done
        self.timer_start = time.time_ns()  # %globaltimer's value when the launch began
        self.lane_work, self.work_budget = 0, 1 << 62  # emulated work (engine.Engine.work) and its cap
        self.resident = 0  # slots holding a block
        if observer is not None:
            observer.on_kernel_start(kernel.name, self.grid, self.block, self.shared_size)
        self._start_blocks(np.arange(R))

    # ---- layout ------------------------------------------------------------------------------
    def _reachable(self, kernel):
        out, todo = [], [kernel]
        while todo:
            f = todo.pop()
            if f in out:
                continue
            if f.end <= f.start and not f.entry:
                raise UnsupportedPTX(f"call of {f.name} (no body in this module)", None, None)
            out.append(f)
            todo.extend(self.module.functions[c] for c in f.callees if c in self.module.functions)
        return out

    def _symbols_used(self):
        for inst in self.code_used:
            for o in inst.ops:
                if o.kind in ("sym", "addr") and o.name:
                    yield o.name

    def _layout_shared(self, dynamic: int) -> None:
        self.sym_shared: dict[str, int] = {}
        # Reserved shared memory (what cooperative groups keep block_tile_memory's scratch in on
        # sm_80+) takes the first RESERVED_SMEM bytes of the window, as on the GPU, when read.
        # What the kernel's code names depends only on the kernel: scanned once per loaded module.
        scans = self.module.__dict__.setdefault("_operand_scans", {})
        key = (self.kernel.name, len(self.code_used))
        if key not in scans:
            scans[key] = (any(o.kind == "reg" and (o.name or "").startswith("%reserved_smem")
                              for i in self.code_used for o in i.ops), set(self._symbols_used()))
        reserved, used = scans[key]
        self.reserved_smem = RESERVED_SMEM if reserved else 0
        off, extern = self.reserved_smem, []
        for v in self.module.vars.values():
            if v.space != "shared" or v.name not in used:
                continue
            if v.size == 0:
                extern.append(v)
                continue
            off = (off + v.align - 1) // v.align * v.align
            self.sym_shared[v.name] = off
            off += v.size
        dyn_at = (off + 15) // 16 * 16 if extern else off
        for v in extern:
            self.sym_shared[v.name] = dyn_at
        self.dynamic_smem = dynamic
        self.shared_size = (dyn_at + dynamic) if (extern or dynamic) else off

    def _layout_local(self) -> None:
        self.sym_local: dict[str, int] = {}
        off = 0
        for f in self.funcs:
            for v in f.vars.values():
                if v.space == "local":
                    off = (off + v.align - 1) // v.align * v.align
                    self.sym_local[v.name] = off
                    self.sym_local[v.name.split("::", 1)[1].split("#")[0]] = off
                    off += v.size
        self.local_size = (off + 15) // 16 * 16

    def _pack_args(self, args) -> bytes:
        params = self.kernel.params
        if len(args) != len(params):
            raise EmulatorError(f"kernel {self.kernel.name} takes {len(params)} arguments, got {len(args)}")
        size = max([p.offset + p.size for p in params] + [8])
        buf = bytearray(size)
        for p, a in zip(params, args):
            if isinstance(a, (bytes, bytearray, np.ndarray)) and p.type in ("b8", "u8") and p.size > 1:
                raw = bytes(np.asarray(a).tobytes() if isinstance(a, np.ndarray) else a)
            elif p.type.startswith("f"):
                raw = np.array(float(a), NP[p.type]).tobytes()
            else:
                raw = (int(a) % (1 << (8 * p.size))).to_bytes(p.size, "little")
            if len(raw) != p.size:
                raise EmulatorError(f"argument for {p.name} has {len(raw)} bytes, the kernel expects {p.size}")
            buf[p.offset:p.offset + p.size] = raw
        self.param_offset = {p.name: p.offset for p in params}
        self.param_offset.update({f"{self.kernel.name}::{p.name}": p.offset for p in params})
        return bytes(buf)

    # ---- blocks ------------------------------------------------------------------------------
    def _start_blocks(self, slots: np.ndarray) -> None:
        slots = slots[: max(0, self.to_run - self.next_block)]
        if slots.size == 0:
            return
        blocks = np.arange(self.next_block, self.next_block + slots.size)
        if self.order is not None:
            blocks = self.order[blocks]
        if self.block_ids is not None:
            blocks = self.block_ids[blocks]
        self.next_block += slots.size
        self.resident += slots.size
        self.slot_block[slots] = blocks
        self.exited[slots] = 0
        gx, gy = self.grid[0], self.grid[1]
        T, R = self.T, self.R
        # Per-slot values broadcast over the slot's T lanes (a reshape, not per-lane arithmetic).
        self.lane_block.reshape(R, T)[slots] = blocks[:, None]
        cx, cy, cz = self.ctaid_xyz
        for arr, val, extent in ((cx, blocks % gx, gx), (cy, (blocks // gx) % gy, gy),
                                 (cz, blocks // (gx * gy), self.grid[2])):
            if extent > 1:  # a grid one block wide in a dimension keeps the zeros it started with
                arr.reshape(R, T)[slots] = val[:, None]
        if slots.size == R:
            lanes = self.every
        else:
            lanes = (slots[:, None] * T + np.arange(T)).ravel()
        self.win.poison_shared(slots)
        if self.reserved_smem:  # the system's area starts zeroed, and defined for the sanitizer
            for k in slots.tolist():
                self.win.shared.buf[k * self.shared_size:k * self.shared_size + self.reserved_smem] = 0
        if self.gone is not None:
            self.gone[lanes] = False
            self.last_mem[lanes] = -1
        if self.stack.shape[1] > 1:
            self.depth.reshape(R, T)[slots] = 0
        if self.observer is not None:
            self.observer.on_block_start(blocks)
            if self.reserved_smem:
                self.observer.on_shared_init(blocks, 0, self.reserved_smem)
        self._push_waves(self.kernel.start, lanes)

    def _finish_blocks(self, slots: np.ndarray) -> None:
        if self.observer is not None:
            self.observer.on_block_end(self.slot_block[slots])
        self.slot_block[slots] = -1
        self.resident -= slots.size
        for arrived in self.arrived.values():
            arrived[slots] = 0
        if self.cs > 1:  # a cluster's slots take the next cluster together, once all are free
            from .ops_cluster import free_groups
            slots = free_groups(self, slots)
        self._start_blocks(slots)

    # ---- operands ----------------------------------------------------------------------------
    def view(self, name: str, t: str) -> np.ndarray:
        key = (name, t)
        v = self._views.get(key)
        if v is None:
            if name not in self.regs:
                raise EmulatorError(f"register {name} is used but never declared")
            v = self._views[key] = reg_view(self.regs[name], t)
        return v

    def special(self, name: str, t: str):
        base, _, comp = name.partition(".")
        k = "xyz".index(comp) if comp in ("x", "y", "z") else 0
        dt = NP[t]
        if base == "%tid":
            return self.tid_xyz[k].astype(dt).__getitem__
        if base == "%ctaid":
            arr = self.ctaid_xyz[k]
            return (lambda sel: arr[sel]) if dt == np.uint32 else (lambda sel: arr[sel].astype(dt))
        if base in ("%ntid", "%nctaid"):
            return const(scalar((self.block if base == "%ntid" else self.grid)[k], t))
        if base == "%laneid":
            return self.laneid.astype(dt).__getitem__
        if base == "%warpid":
            return (self.lane_tid // 32).astype(dt).__getitem__
        if base.startswith("%lanemask_"):
            lid = self.laneid.astype(np.uint64)
            one = np.uint64(1)
            m = {"eq": one << lid, "lt": (one << lid) - one, "le": (one << (lid + one)) - one}
            m["ge"] = ~m["lt"] & np.uint64(0xFFFFFFFF)
            m["gt"] = ~m["le"] & np.uint64(0xFFFFFFFF)
            return m[base[10:]].astype(dt).__getitem__
        if base in ("%clock", "%clock64", "%globaltimer"):
            # As a GPU's: %clock counts its SM's cycles (each SM's counter started at its own time),
            # %globaltimer nanoseconds since the epoch; both move with the work issued and on every
            # read. A kernel that tells the emulator by a small or shared clock sees neither.
            if base == "%globaltimer":
                start = self.timer_start

                def tick(sel):
                    self.clock += 1
                    return scalar(start + (self.issued * 4 + self.clock) * 4 // 7, t)  # 1.75 GHz
                return tick
            mask = (1 << 32) - 1 if base == "%clock" else (1 << 64) - 1

            def tick(sel):
                self.clock += 1  # monotonic: every read moves time forward
                sm = self.lane_block[sel] % H200_SMS
                return ((_SM_CLOCK_START[sm] + np.uint64(self.issued * 4 + self.clock)) & np.uint64(mask)).astype(dt)
            return tick
        if base == "%smid":  # blocks go to SMs round-robin, as a GPU's block scheduler starts them
            return lambda sel: (self.lane_block[sel] % H200_SMS).astype(dt)
        if base in ("%dynamic_smem_size", "%total_smem_size"):
            return const(scalar(self.dynamic_smem if base[1] == "d" else self.shared_size, t))
        if base in ("%nsmid", "%gridid", "%nwarpid"):
            val = {"%nsmid": H200_SMS, "%nwarpid": 64}.get(base, 0)
            return const(scalar(val, t))
        if base.startswith("%reserved_smem_offset") or base == "%aggr_smem_size":
            half = self.reserved_smem // 2
            val = {"begin": 0, "end": self.reserved_smem, "cap": self.reserved_smem, "0": 0,
                   "1": half}.get(base[22:], self.shared_size)
            return const(scalar(val, t))
        if base in ("%clusterid", "%nclusterid") or base.startswith("%cluster_") or base == "%is_explicit_cluster":
            from .ops_cluster import special  # without cluster dimensions, clusters of one block
            return special(self, base, k, t)
        raise UnsupportedPTX(f"special register {name}", None, None)

    def symbol_address(self, name: str, inst) -> int:
        if name in self.sym_shared:
            return self.sym_shared[name]
        if name in self.sym_local:
            return self.sym_local[name]
        if name in self.globals_at:
            return self.globals_at[name]
        if name in self.param_offset:  # a kernel parameter's address is its offset in the parameter
            return self.param_offset[name]  # buffer: `mov %rd, k_param_2; ld.param [%rd+8]` (clang)
        raise UnsupportedPTX(f"{inst.opcode} of symbol {name}", inst.file, inst.line)

    def kparam(self, name: str, off: int, t: str):
        """A kernel parameter's bytes as a scalar (they are the same for every lane)."""
        at = self.param_offset[name] + off
        dt = np.dtype(NP[t])
        return np.frombuffer(self._params[at:at + dt.itemsize], dt)[0]

    # ---- findings ----------------------------------------------------------------------------
    def where(self, pc: int) -> str:
        inst = self.code[pc]
        return f"{inst.file or '?'}:{inst.line if inst.line is not None else '?'}"

    def block_xyz(self, b: int) -> tuple[int, int, int]:
        gx, gy = self.grid[0], self.grid[1]
        return (b % gx, (b // gx) % gy, b // (gx * gy))

    def thread_xyz(self, t: int) -> tuple[int, int, int]:
        bx, by = self.block[0], self.block[1]
        return (t % bx, (t // bx) % by, t // (bx * by))

    def report(self, kind, inst, lanes, message, address=None, space=None, detail="", once=False):
        """Record a finding; repeats of (kind, line) only raise its count."""
        key = (kind, inst.file, inst.line)
        n = int(np.size(lanes))
        if key in self.found:
            if not once:
                f = self.found[key]
                self.found[key] = Finding(**{**f.__dict__, "count": f.count + max(1, n)})
            return
        first = int(np.asarray(lanes).ravel()[0]) if n else 0
        self.found[key] = Finding(kind=kind, message=message, file=inst.file, line=inst.line,
                                  block=self.block_xyz(int(self.lane_block[first])),
                                  thread=self.thread_xyz(int(self.lane_tid[first])),
                                  address=address, space=space, count=max(1, n), detail=detail)


__all__ = ["LaunchState", "SHARED_WINDOW", "LOCAL_WINDOW"]
