"""Synchronisation for the scheduler (engine.py): block barriers, warp-level sync, and the
launch-ending findings (deadlock, watchdog). A mixin of Engine, split out of the loop by concern.

Barriers count arrivals per barrier id and block; exited threads count as arrived, so a barrier
completed only thanks to them is reported: barrier-after-exit when they exited without running
anything past it (a barrier inside an `if` part of the block skips, or after an `if (...) return;`),
a divergent barrier when they ran on past it; both are errors (a barrier in non-uniform control
flow is invalid CUDA). Barriers at
different PCs that complete together are a divergent barrier naming both and their threads.
Warp-level operations wait until every existing lane of their member mask has arrived.
"""
from __future__ import annotations

import numpy as np

from .lanesets import merge as _merge
from .lanesets import sel as _sel
from .ops import BARRIER


class Synchronisation:
    """Engine's barrier and warp-sync handling; expects LaunchState's fields and Engine._push."""

    def _idle(self) -> bool:
        """Nothing runnable: finish, or report a deadlock. False ends the loop."""
        if self._release():  # a block's second wave of warps (schedule.py) goes now
            return True
        if self.bar_waiting or self.ws_waiting or getattr(self, "cluster_waiting", None):
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
            self._push_waves(pc + 1, idx)
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
                self._push_waves(p + 1, lanes)

    def _after_exit(self, first, done) -> None:
        """A barrier completed because exited threads count as arrived. Threads that exited without
        reaching anything past the barrier are barrier-after-exit; threads that skipped it and went
        on to write memory after it in the program are a divergent barrier: they ran code the
        barrier was meant to order."""
        p0, l0 = first
        past = np.zeros(0, np.int64)
        if self.gone is not None:  # what exited lanes did is kept only with an observer (sanitizer)
            lanes = (done[:, None] * self.T + np.arange(self.T)).ravel()
            gone = lanes[self.gone[lanes]]
            last = self.last_mem[gone]
            # past the barrier in program order, in the barrier's own function (a callee's code
            # lies elsewhere in the module, so its PCs say nothing about the barrier)
            fn = self._function_of_pc()
            past = gone[(last > p0) & (fn[np.maximum(last, 0)] == fn[p0])]
        if past.size:
            self.report("divergent-barrier", self.code[p0], l0,
                        f"{self._barrier_name(p0)} at {self.where(p0)} is reached by {self.threads(l0)} only: "
                        f"{self.threads(past)} never arrived: they ran {self.where(int(self.last_mem[past[0]]))}, "
                        "past it, and exited, so the barrier does not order what it should (every "
                        f"thread of the block must reach the same {self._barrier_name(p0)})")
            return
        self.report("barrier-after-exit", self.code[p0], l0,
                    f"{self._barrier_name(p0)} at {self.where(p0)} is reached by {self.threads(l0)} only: the others "
                    f"of the block {self._skipped_by(p0)} and exited, so the barrier completed only because "
                    "exited threads count as arrived. A barrier in control flow that not every thread of the "
                    "block takes is invalid CUDA (the programming guide's rule for __syncthreads()): keep "
                    "every thread alive to the barrier and guard only the work around it", once=True)

    def _barrier_name(self, pc: int) -> str:
        """__syncthreads() as the kernel's language spells it (numba: cuda.syncthreads())."""
        from .sanitizer_report import fix, language_of

        return fix("__syncthreads()", language_of(self.code[pc].file, self.kernel.name))

    def _skipped_by(self, p0: int) -> str:
        """How the exited threads got past the barrier at p0, as the code says it: the conditional
        branch before it, in its function, that jumps over it (an `if` around the barrier, or an
        `if (...) return;` above it; the PTX of the two is the same)."""
        code = self.code
        for p in range(p0 - 1, -1, -1):
            inst = code[p]
            if inst.func != code[p0].func:
                break
            if inst.op == "bra" and inst.guard is not None and inst.target is not None and inst.target > p0:
                return f"took the branch at {self.where(p)}, which skips it,"
        return "never reached it"

    def _function_of_pc(self) -> np.ndarray:
        """Per PC, an id of the function it belongs to (computed once per launch)."""
        if getattr(self, "_pc_function", None) is None:
            ids: dict = {}
            self._pc_function = np.array([ids.setdefault(i.func, len(ids)) for i in self.code], np.int64)
        return self._pc_function

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

    def _watchdog(self, inst, idx, budget: str) -> None:
        why = (f"ran {self.issued} instruction issues (the budget)" if budget == "issues"
               else f"ran {self.work():,} units of emulated work (the budget)" if budget == "work"
               else f"ran longer than {self.wall_clock_s:g} s of wall clock")
        self.report("watchdog", inst, idx, f"the kernel {why} and was stopped near {self.where(inst.pc)}: "
                    "probably an endless loop or a spin-wait nothing will release")
        self.stopped = True

    def _deadlock(self) -> None:
        lines = []
        first = None
        for kind, waiting in (("barrier", self.bar_waiting), ("warp-sync", self.ws_waiting),
                              ("cluster barrier", getattr(self, "cluster_waiting", None) or {})):
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
