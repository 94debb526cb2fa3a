"""The SIMT scheduler: all threads of the resident blocks, grouped by program counter.

Lanes at the same PC form a group and run one instruction as one numpy operation, across warps
and blocks. The lowest-PC group goes first: NVRTC places join points after both sides of a branch,
so running the lower side first lets the sides meet again (reconverge) at the join. A group keeps
its lanes as a sorted index array; when they are contiguous it is indexed with a slice, which
makes register reads views instead of copies (the whole-grid case of a reduction is one slice).
With no observer attached, a group that is the same tids in a run of blocks (a "box", the usual
shape of `if (tid < stride)`) runs through 2-D views instead of gathers: see boxes.py.

Barriers and warp-level sync are in sync.py (a mixin of Engine). A group that keeps jumping
backwards while others wait yields now and then, so spin-waits on a flag another block sets make
progress; one whose mbarrier poll just failed yields at once (a GPU's try_wait suspends). When
nothing can run and lanes still wait, the launch is a deadlock.
"""
from __future__ import annotations

import time

import numpy as np

from . import boxes, fused, instructions, ops  # noqa: F401  (instructions: registers every builder)
from .findings import Finding
from .lanes import LaunchState
from .lanesets import merge as _merge
from .lanesets import sel as _sel
from .observer import wants_issue
from .ops import BARRIER, BRANCH, CALL, EXIT, PARK, PLAIN, RET, WARPSYNC
from .sync import Synchronisation

SPIN_LIMIT = 64  # backward branches in a row by one group before another group gets a turn

#: Emulated work, the unit of a deterministic budget: each issue costs ISSUE_WORK (the loop's and
#: the observers' fixed cost per issue) plus its active lanes times LANE_COST of its opcode (1 for
#: plain arithmetic; an mma lane multiplies a fragment, a memory lane is traced by the observers).
#: ISSUE_WORK is fitted to the CPU seconds of the catalogue's model runs (~23 us per issue and
#: ~11 ns per unit of lane work under a profiling observer); the opcode ratios are rough. Counted,
#: so a budget in work stops a run at the same place on any machine and under any load.
ISSUE_WORK = 2048
LANE_COST = {"mma": 16, "wmma": 16, "ld": 2, "st": 2, "atom": 4, "red": 4, "cp": 2, "ldmatrix": 8}


class Engine(Synchronisation, LaunchState):
    """One launch. LaunchState holds the lanes, registers and memory windows; this is the loop."""

    def run(self) -> tuple[bool, int]:
        # Box runs (boxes.py) only without observers: the hooks take 1-D lane arrays.
        two = boxes.rows_view(self) if self.observer is None and self.N >= boxes.LAUNCH_MIN else None
        self.boxed = two is not None
        fused.attach(self, self.code_used)
        for inst in self.code_used:
            inst.cost = LANE_COST.get(inst.op, 1)
            if inst.batch is None:
                ops.bind(self, inst)
            else:
                fused.bind_lazily(self, inst)
            inst.gv = self.view(inst.guard, "pred") if inst.guard else None
            inst.run2 = boxes.lazy(two, inst)
            inst.gv2 = inst.gv.reshape(self.R, self.T) if inst.gv is not None and two is not None else None
        with np.errstate(all="ignore"):
            try:
                self._loop()
            finally:
                if self.observer is not None:
                    self.observer.on_kernel_end()
        return self.stopped, self.issued

    def work(self) -> int:
        """Emulated work so far (ISSUE_WORK per issue plus cost-weighted lanes)."""
        return self.lane_work + ISSUE_WORK * self.issued

    # ---- the loop ----------------------------------------------------------------------------
    def _polled(self) -> bool:
        """Whether the loop closing now polled an mbarrier in vain (the flag is read once): a
        waiting group yields at its back edge at once, not after SPIN_LIMIT turns of spinning."""
        failed, self.poll_failed = self.poll_failed, False
        return failed

    def _loop(self) -> None:
        code, runnable = self.code, self.runnable
        budget, deadline = self.budget, time.monotonic() + self.wall_clock_s
        work_budget = self.work_budget  # emulated work (work()), checked every issue
        obs = self.observer if wants_issue(self.observer) else None  # only on_issue is called here
        spins, rotate_from = 0, -1
        while not self.stopped:
            if not runnable:
                if not self._idle():
                    return
                continue
            if spins >= SPIN_LIMIT and len(runnable) > 1:
                # A group keeps looping while others wait: give the next group a full turn (until
                # it reaches a higher group or branches), so a flag it would set gets set.
                later = [p for p in runnable if p > rotate_from]
                pc = min(later) if later else min(runnable)
                rotate_from, spins = pc, 0
                idx = boxes.written(runnable.pop(pc))
                nxt = min([p for p in runnable if p > pc], default=1 << 62)
            else:
                pc = min(runnable)
                idx = boxes.written(runnable.pop(pc))
                nxt = min(runnable) if runnable else 1 << 62
            sel, box = boxes.lanes_of(self, idx)
            n = idx.size
            while True:
                inst = code[pc]
                self.issued += 1
                self.lane_work += n * inst.cost
                if self.issued & 1023 == 0 or self.lane_work + ISSUE_WORK * self.issued > work_budget:
                    if self.stopped:  # an instruction ended the launch (a hang ops_mbarrier detected)
                        return
                    if self.work() > work_budget:
                        self._watchdog(inst, idx, "work")
                        return
                    if self.issued > budget or time.monotonic() > deadline:
                        self._watchdog(inst, idx, "issues" if self.issued > budget else "")
                        return
                g = inst.gv
                if g is not None:
                    m = g[sel] if box is None else inst.gv2[box].ravel()
                    k = np.count_nonzero(m)
                    if inst.neg:
                        k = m.size - k
                    if inst.kind == BRANCH:
                        if k == m.size:
                            if inst.target <= pc:
                                spins = SPIN_LIMIT if self._polled() else spins + 1
                                if spins >= SPIN_LIMIT and (runnable or self._release()):
                                    self._push(inst.target, idx)
                                    break
                            pc = inst.target
                        elif k:
                            yes, no = boxes.split(self, idx, m, box)
                            if inst.neg:
                                yes, no = no, yes
                            self._push(inst.target, yes)
                            self._push(pc + 1, no)
                            break
                        else:
                            pc += 1
                        if pc >= nxt or pc in runnable:
                            self._push(pc, idx)
                            break
                        continue
                    if k < m.size:
                        if not k:
                            pc += 1
                            if pc >= nxt:
                                self._push(pc, idx)
                                break
                            continue
                        if inst.neg:
                            m = ~m
                        sub = idx[m]
                        if inst.kind != PLAIN:
                            self._execute(inst, pc, sub, _sel(sub), obs)
                            self._push(pc + 1, idx[~m])
                            break
                        ssel, sbox = boxes.lanes_of(self, sub)
                        if obs is not None:
                            obs.on_issue(inst, self.lane_block[ssel], self.lane_tid[ssel])
                        if sbox is None or inst.run2 is None or inst.run2(sbox):
                            inst.run(ssel)
                        pc += 1
                        if pc >= nxt:
                            self._push(pc, idx)
                            break
                        continue
                kind = inst.kind
                if kind == PLAIN:
                    b = inst.batch
                    if b is not None:  # a run of f32 arithmetic (fused.py), up to the next group
                        m = min(b[0][3] - b[1], nxt - pc, 1024 - (self.issued & 1023))  # and watchdog
                        if m > 1:
                            if obs is not None:
                                blocks, tids = self.lane_block[sel], self.lane_tid[sel]
                                for k in range(m):
                                    obs.on_issue(code[pc + k], blocks, tids)
                            fused.run(self, b, sel, m)
                            self.issued += m - 1
                            self.lane_work += (m - 1) * n
                            pc += m
                            if pc >= nxt:
                                self._push(pc, idx)
                                break
                            continue
                    if obs is not None:
                        obs.on_issue(inst, self.lane_block[sel], self.lane_tid[sel])
                    if box is None or inst.run2 is None or inst.run2(box):
                        inst.run(sel)
                    pc += 1
                    if pc >= nxt:
                        self._push(pc, idx)
                        break
                    continue
                if kind == BRANCH:
                    if obs is not None:
                        obs.on_issue(inst, self.lane_block[sel], self.lane_tid[sel])
                    if inst.target <= pc:
                        spins = SPIN_LIMIT if self._polled() else spins + 1
                        if spins >= SPIN_LIMIT and (runnable or self._release()):
                            self._push(inst.target, idx)
                            break
                    pc = inst.target
                    if pc >= nxt or pc in runnable:
                        self._push(pc, idx)
                        break
                    continue
                self._execute(inst, pc, idx, sel, obs)
                break

    def _execute(self, inst, pc, idx, sel, obs) -> bool:
        """Run a non-branch instruction for lanes idx; True when they left the straight line (the
        caller must not advance them itself)."""
        kind = inst.kind
        if obs is not None:
            obs.on_issue(inst, self.lane_block[sel], self.lane_tid[sel])
        if kind == PLAIN:
            inst.run(sel)
            self._push(pc + 1, idx)
            return True
        if kind == BRANCH:
            self._push(inst.target, idx)
        elif kind == EXIT:
            inst.run(sel)  # nothing, or a trap's report
            self._exit(idx)
        elif kind == BARRIER:
            self._barrier(inst, pc, idx)
        elif kind == WARPSYNC:
            self._warp_sync(inst, pc, idx)
        elif kind == CALL:
            self._call(inst, pc, idx, sel)
        elif kind == RET:
            self._ret(inst, idx, sel)
        elif kind == PARK:
            inst.aux(self, pc, idx)
        return True

    def _push(self, pc: int, idx: np.ndarray) -> None:
        if idx.size == 0:
            return
        r = self.runnable
        r[pc] = _merge(r.get(pc), idx, self.every)

    def _push_waves(self, pc: int, idx: np.ndarray) -> None:
        """Push lanes that start a block or leave a barrier; under a schedule with warp waves
        (schedule.late_warps) the second wave's lanes are held until the first cannot go on."""
        if self.late is None:
            self._push(pc, idx)
            return
        late = self.late[idx]
        self._push(pc, idx[~late])
        if late.any():
            self.held[pc] = _merge(self.held.get(pc), idx[late], self.every)

    def _release(self) -> bool:
        """Make the held wave runnable; False when none was held."""
        if not self.held:
            return False
        for pc, idx in self.held.items():
            self._push(pc, idx)
        self.held = {}
        return True

    # ---- calls -------------------------------------------------------------------------------
    def _call(self, inst, pc, idx, sel) -> None:
        inst.run(sel)  # copies the arguments into the callee's parameters
        d = self.depth[idx]
        if int(d.max()) >= self.stack.shape[1]:
            raise ops.UnsupportedPTX("call (recursion deeper than the call graph)", inst.file, inst.line)
        self.stack[idx, d] = pc + 1
        self.depth[idx] = d + 1
        self._push(inst.target, idx)

    def _ret(self, inst, idx, sel) -> None:
        d = self.depth[idx] - 1
        top = d < 0
        if top.any():  # ret from the kernel itself
            self._exit(idx[top])
            idx, d = idx[~top], d[~top]
            if idx.size == 0:
                return
        back = self.stack[idx, d]
        self.depth[idx] = d
        for target in np.unique(back).tolist():
            lanes = idx[back == target]
            self.code[target - 1].aux[3](_sel(lanes), inst.func)  # copy the return values
            self._push(target, lanes)

    # ---- exits, blocks, barriers --------------------------------------------------------------
    def _exit(self, idx: np.ndarray) -> None:
        T = self.T
        if self.gone is not None:
            self.gone[idx] = True
        if idx.size == self.N and self.exited.sum() == 0:
            self.exited[:] = T
            done = np.arange(self.R)
        else:
            counts = np.bincount(self.lane_slot[idx], minlength=self.R)
            self.exited += counts
            touched = np.flatnonzero(counts)
            if self.bar_waiting:
                self._check_barriers(touched)
            done = touched[self.exited[touched] >= T]
        if done.size:
            self._finish_blocks(done)

    def findings_list(self) -> list[Finding]:
        return [f for f in self.found.values()]
