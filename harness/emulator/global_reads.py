"""What threads read from global memory, for the global-race shadow (global_shadow.py, whose mixin
this is): the last plain reader of each word of the written window, a bounded log of reads made
before the window reached them, and whether a stored value is computed from a global load (read
backwards through the registers), which tells an update from a broadcast or a published label."""
from __future__ import annotations

import numpy as np

READ_LOG = 1 << 16  # lanes of reads outside the window kept for a later write (the cost's bound)


class Reads:
    """Expects GlobalRaces' fields: cols, lo, hi, read_log, logged, read_any, code, _derived_cache,
    and its _words."""

    def _record_reads(self, inst, blocks, tids, off, size, epochs, wsyncs) -> None:
        """The last plain reader of each word: in the window's read columns, else in the log."""
        line = -1 if inst.line is None else int(inst.line)
        outside = (off < self.lo) | (off >= self.hi) if self.cols else None
        if self.cols and not outside.all():
            w, lanes = self._words(off, size)
            if w is not None and w.size:
                self._enter_reads(w, blocks[lanes], tids[lanes], line, self.clock, epochs[lanes], wsyncs[lanes])
        if self.logged >= READ_LOG:
            return
        k = np.arange(off.size) if outside is None else np.flatnonzero(outside)
        if k.size:
            k = k[: READ_LOG - self.logged]
            self.logged += k.size
            o = off[k]
            self.read_log.append((int(o.min()), int(o.max()), o, blocks[k], tids[k], line, self.clock,
                                  np.asarray(epochs)[k], np.asarray(wsyncs)[k], int(size)))

    def _enter_reads(self, w, blocks, tids, line, time, epochs, wsyncs) -> None:
        c = self.cols
        self.read_any = True
        c["r_block"][w], c["r_tid"][w], c["r_line"][w] = blocks, tids, line
        c["r_time"][w], c["r_epoch"][w], c["r_wsync"][w] = time, epochs, wsyncs

    def _replay_reads(self) -> None:
        """Logged reads the window now covers go into its read columns, in the order they ran."""
        kept = []
        for entry in self.read_log:
            if entry[1] < self.lo or entry[0] >= self.hi:  # none of it in the window (most input reads)
                kept.append(entry)
                continue
            _, _, off, blocks, tids, line, time, epochs, wsyncs, size = entry
            inside = (off >= self.lo) & (off < self.hi)
            if inside.any():
                w, lanes = self._words(off, size)
                self._enter_reads(w, blocks[lanes], tids[lanes], line, time, epochs[lanes], wsyncs[lanes])
            if not inside.all():
                k = ~inside
                o = off[k]
                kept.append((int(o.min()), int(o.max()), o, blocks[k], tids[k], line, time, epochs[k], wsyncs[k], size))
        self.read_log = kept

    def _derived(self, inst) -> bool:
        """Whether the value a store writes is computed from a global load (x[i] = x[i] + v), read
        backwards through the instructions before it that define its registers: lanes storing one
        such value to one word lost each other's updates; a constant (a BFS's label) is a broadcast."""
        got = self._derived_cache.get(inst.pc)
        if got is not None:
            return got
        got = self.code is None  # without the code, assume the worst
        if not got:
            need = {o.name for o in _regs(inst.ops[1:])}
            for p in range(inst.pc - 1, max(-1, inst.pc - 48), -1):
                i = self.code[p]
                if i.func != inst.func:
                    break
                if not i.ops or i.op in ("st", "bra", "bar", "red"):
                    continue
                dest = i.ops[0]
                names = {o.name for o in _regs((dest,))}
                if not names & need:
                    continue
                if i.op in ("ld", "ldu", "atom") and not any(m in i.mods for m in ("param", "shared", "local", "const")):
                    got = True
                    break
                need -= names
                need |= {o.name for o in _regs(i.ops[1:])}
        self._derived_cache[inst.pc] = got
        return got


def _regs(ops):
    """The register operands among ops, vectors opened."""
    for o in ops:
        if o.kind == "reg":
            yield o
        elif o.kind == "vec":
            yield from (x for x in o.items if x.kind == "reg")
