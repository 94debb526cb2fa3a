"""The SIMT scheduler: all threads of the resident blocks, grouped by program counter.

Lanes at the same PC form a group and run one instruction as one numpy operation, across warps
and blocks. The lowest-PC group goes first: NVRTC places join points after both sides of a branch,
so running the lower side first lets the sides meet again (reconverge) at the join. A group keeps
its lanes as a sorted index array; when they are contiguous it is indexed with a slice, which
makes register reads views instead of copies (the whole-grid case of a reduction is one slice).
With no observer attached, a group that is the same tids in a run of blocks (a "box", the usual
shape of `if (tid < stride)`) runs through 2-D views instead of gathers: see boxes.py.

Barriers count arrivals per barrier id and block (exited threads count as arrived); warp-level
sync operations wait until every lane of their member mask has arrived; a group that keeps
jumping backwards while others wait yields now and then, so spin-waits on a flag another block
sets make progress. When nothing can run and lanes still wait, the launch is a deadlock.
"""
from __future__ import annotations

import time

import numpy as np

from . import boxes, ops
from .findings import Finding
from .lanes import LaunchState
from .ops import BARRIER, BRANCH, CALL, EXIT, PLAIN, RET, WARPSYNC

SPIN_LIMIT = 64  # backward branches in a row by one group before another group gets a turn


def _sel(idx: np.ndarray):
    n = idx.size
    a = int(idx[0])
    return slice(a, a + n) if int(idx[n - 1]) - a == n - 1 else idx


def _merge(a: np.ndarray | None, b: np.ndarray, every: np.ndarray) -> np.ndarray:
    """The union of two sorted, disjoint lane sets; `every` is arange(N)."""
    if a is None or a.size == 0:
        return b
    lo, hi = min(boxes.first(a), boxes.first(b)), max(boxes.last(a), boxes.last(b))
    if a.size + b.size == hi - lo + 1:  # disjoint and filling the range: a view, nothing to sort
        return every[lo:hi + 1]
    a, b = boxes.written(a), boxes.written(b)
    if a[-1] < b[0]:
        return np.concatenate((a, b))
    if b[-1] < a[0]:
        return np.concatenate((b, a))
    n = every.size
    if 8 * (a.size + b.size) > n:  # interleaved and large: mark and collect beats sorting
        mark = np.zeros(n, bool)
        mark[a] = True
        mark[b] = True
        return np.flatnonzero(mark)
    return np.sort(np.concatenate((a, b)), kind="stable")  # two sorted runs: a linear merge


class Engine(LaunchState):
    """One launch. LaunchState holds the lanes, registers and memory windows; this is the loop."""

    def run(self) -> tuple[bool, int]:
        ops.ensure_loaded()
        # Box runs (boxes.py) only without observers: the hooks take 1-D lane arrays.
        two = boxes.rows_view(self) if self.observer is None and self.N >= boxes.LAUNCH_MIN else None
        self.boxed = two is not None
        for inst in self.code_used:
            ops.bind(self, inst)
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

    # ---- the loop ----------------------------------------------------------------------------
    def _loop(self) -> None:
        code, runnable = self.code, self.runnable
        budget, deadline = self.budget, time.monotonic() + self.wall_clock_s
        obs = self.observer
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
            while True:
                inst = code[pc]
                self.issued += 1
                if self.issued & 1023 == 0:
                    if self.issued > budget or time.monotonic() > deadline:
                        self._watchdog(inst, idx, self.issued > budget)
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
                                spins += 1
                                if spins >= SPIN_LIMIT and runnable:
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
                        spins += 1
                        if spins >= SPIN_LIMIT and runnable:
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
        return True

    def _push(self, pc: int, idx: np.ndarray) -> None:
        if idx.size == 0:
            return
        r = self.runnable
        r[pc] = _merge(r.get(pc), idx, self.every)

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

    def _idle(self) -> bool:
        """Nothing runnable: finish, or report a deadlock. False ends the loop."""
        if self.bar_waiting or self.ws_waiting:
            self._deadlock()
            return False
        return False

    def _barrier(self, inst, pc, idx) -> None:
        bid, count = inst.aux
        if idx.size == self.T * self.resident and not self.bar_waiting and count is None:
            # Every thread of every resident block arrived at once (so none exited): the common case.
            if self.observer is not None:
                self.observer.on_barrier(self.slot_block[self.slot_block >= 0])
            inst.run(_sel(idx))  # nothing, or bar.red's block-wide reduction
            self._push(pc + 1, idx)
            return
        self.bar_waiting[pc] = _merge(self.bar_waiting.get(pc), idx, self.every)
        self.arrived[bid] = self.arrived.get(bid, np.zeros(self.R, np.int64)) + np.bincount(
            self.lane_slot[idx], minlength=self.R)
        self._check_barriers(np.unique(self.lane_slot[idx]))

    def _check_barriers(self, slots: np.ndarray) -> None:
        for bid, arrived in list(self.arrived.items()):
            pcs = [p for p in self.bar_waiting if self.code[p].aux[0] == bid]
            if not pcs:
                continue
            count = self.code[pcs[0]].aux[1]
            a = arrived[slots]
            need = count if count is not None else self.T - self.exited[slots]
            done = slots[(a > 0) & (a >= need)]
            if done.size == 0:
                continue
            arrived[done] = 0
            live = np.zeros(self.R, bool)
            live[done] = True
            froms = []
            for p in pcs:
                lanes = self.bar_waiting[p]
                go = live[self.lane_slot[lanes]]
                if go.any():
                    froms.append((p, lanes[go]))
                    rest = lanes[~go]
                    if rest.size:
                        self.bar_waiting[p] = rest
                    else:
                        del self.bar_waiting[p]
            if len(froms) > 1:
                p0, l0 = froms[0]
                p1, l1 = froms[1]
                self.report("divergent-barrier", self.code[p0], l0,
                            f"__syncthreads() at {self.where(p0)} ({self.threads(l0)}) completed together "
                            f"with the one at {self.where(p1)} ({self.threads(l1)}): part of the block waits "
                            "at a different barrier, so the two sides do not synchronise with what they "
                            "think (a barrier inside a branch or a loop whose trip count differs between "
                            "warps)")
            if count is None and self.exited[done].any():
                self._after_exit(froms[0], done)
            if self.observer is not None:
                self.observer.on_barrier(self.slot_block[done])
            if self.code[froms[0][0]].op == "bar" and "red" in self.code[froms[0][0]].mods:
                everyone = np.sort(np.concatenate([lanes for _, lanes in froms]))
                self.code[froms[0][0]].run(_sel(everyone))
            for p, lanes in froms:
                self._push(p + 1, lanes)

    def _after_exit(self, first, done) -> None:
        """A barrier completed because exited threads count as arrived. Threads that returned early
        before reaching anything past the barrier (`if (i >= n) return;`) are a warning; threads
        that skipped it and went on to write memory after it in the program are a divergent
        barrier: they ran code the barrier was meant to order."""
        p0, l0 = first
        past = np.zeros(0, np.int64)
        if self.gone is not None:  # what exited lanes did is kept only with an observer (sanitizer)
            lanes = (done[:, None] * self.T + np.arange(self.T)).ravel()
            gone = lanes[self.gone[lanes]]
            past = gone[self.last_mem[gone] > p0]
        if past.size:
            self.report("divergent-barrier", self.code[p0], l0,
                        f"__syncthreads() at {self.where(p0)} is reached by {self.threads(l0)} only: "
                        f"{self.threads(past)} never arrived: they ran {self.where(int(self.last_mem[past[0]]))}, "
                        "past it, and exited, so the barrier does not order what it should (every "
                        "thread of the block must reach the same __syncthreads())")
            return
        self.report("barrier-after-exit", self.code[p0], l0,
                    f"__syncthreads() at {self.where(p0)} completed only because some threads "
                    "of the block had already exited (an early return before a barrier is "
                    "undefined behaviour)", once=True)

    def threads(self, lanes: np.ndarray) -> str:
        """The threads of `lanes` in the first block they cover, as ranges: 'threads 32-127 of
        block (0,0,0)'."""
        lanes = np.asarray(lanes).ravel()
        slot = int(self.lane_slot[lanes[0]])
        tids = np.unique(self.lane_tid[lanes[self.lane_slot[lanes] == slot]])
        cut = np.flatnonzero(np.diff(tids) != 1) + 1
        runs = [(int(r[0]), int(r[-1])) for r in np.split(tids, cut)]
        text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:4]) + (", ..." if len(runs) > 4 else "")
        b = self.block_xyz(int(self.slot_block[slot]))
        return f"thread{'s' if tids.size > 1 else ''} {text} of block ({b[0]},{b[1]},{b[2]})"

    def _watchdog(self, inst, idx, budget: bool) -> None:
        why = (f"ran {self.issued} instruction issues (the budget)" if budget
               else f"ran longer than {self.wall_clock_s:g} s of wall clock")
        self.report("watchdog", inst, idx, f"the kernel {why} and was stopped near {self.where(inst.pc)}: "
                    "probably an endless loop or a spin-wait nothing will release")
        self.stopped = True

    def _deadlock(self) -> None:
        lines = []
        first = None
        for kind, waiting in (("barrier", self.bar_waiting), ("warp-sync", self.ws_waiting)):
            for p, lanes in sorted(waiting.items()):
                first = first or (p, lanes)
                for w in np.unique(self.gwarp[lanes])[:8].tolist():
                    inw = lanes[self.gwarp[lanes] == w]
                    slot, warp = divmod(w, self.WPB)
                    mask = int(np.bitwise_or.reduce(self.lbit[inw]))
                    lines.append(f"block {self.block_xyz(int(self.slot_block[slot]))} warp {warp}: lanes "
                                 f"{mask:#010x} wait at {kind} {self.code[p].opcode} ({self.where(p)})")
        p, lanes = first
        inst = self.code[p]
        if inst.kind == BARRIER:
            self.report("divergent-barrier", inst, lanes,
                        f"__syncthreads() at {self.where(p)} can never complete: other threads of the "
                        "block wait at a different barrier or will never arrive", detail="\n".join(lines))
        self.report("deadlock", inst, lanes,
                    f"no thread can make progress: {inst.opcode} at {self.where(p)} waits for lanes that "
                    "exited or wait elsewhere (check the member mask and that every lane reaches it)",
                    detail="\n".join(lines))
        self.stopped = True

    # ---- warp-level synchronisation ----------------------------------------------------------
    def _warp_sync(self, inst, pc, idx) -> None:
        parked = self.ws_waiting.pop(pc, None)
        if parked is not None:
            idx = _merge(parked, idx, self.every)
        maskget = inst.aux
        if parked is None and idx.size == self.N and (
                maskget is None or bool((maskget(_sel(idx)) == 0xFFFFFFFF).all())):
            ready = idx  # full mask, every lane of every warp here: nothing to wait for
        else:
            gw = self.gwarp[idx]
            have = np.bincount(gw, weights=self.lbit[idx], minlength=self.NW).astype(np.uint64)
            need = np.zeros(self.NW, np.uint64)
            m = np.uint64(0xFFFFFFFF) if maskget is None else np.asarray(maskget(_sel(idx))).astype(np.uint64)
            need[gw] = m
            need &= self.warp_exists
            ok = (have[gw] & need[gw]) == need[gw]
            if ok.all():
                ready = idx
            else:
                ready = idx[ok]
                self.ws_waiting[pc] = idx[~ok]
                if ready.size == 0:
                    return
        sel = _sel(ready)
        self.code[pc].run(sel)
        if self.observer is not None and self.code[pc].op == "bar":
            w = np.unique(self.gwarp[ready])
            slot, warp = np.divmod(w, self.WPB)
            masks = np.bincount(self.gwarp[ready], weights=self.lbit[ready], minlength=self.NW)[w]
            self.observer.on_warp_sync(self.slot_block[slot], warp, masks.astype(np.int64))
        self._push(pc + 1, ready)

    def findings_list(self) -> list[Finding]:
        return [f for f in self.found.values()]
