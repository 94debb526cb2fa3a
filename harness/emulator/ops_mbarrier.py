"""mbarrier objects (sm_80/sm_90): init, arrive (with expect_tx), expect_tx, complete_tx, test_wait /
try_wait (by state or by phase parity), inval, pending_count, and cp.async.mbarrier.arrive.

An mbarrier is 8 bytes of shared memory; its state here lives beside memory, keyed by (block,
offset): the expected arrivals per phase, the arrivals still pending, the transaction bytes still
pending (tx-count) and the number of completed phases. A phase completes when both pending counts
reach zero; then pending arrivals reset to the expected count. A state token (what arrive returns)
is the phase number it arrived in; `test_wait`/`try_wait` with a token succeed once that phase has
completed, and with `.parity p` once the phase of parity p before the current one has (so parity 1
succeeds at once on a fresh barrier, whose phase 0 is running: the classic wrong-phase wait).
A wait first looks at the barrier as it is, and only when that fails lets the copies in flight
land (they complete while it waits), so a wait that succeeds at once reads before they land.

Bulk and tensor copies (ops_tma.py) that signal a barrier (`.mbarrier::complete_tx::bytes`) land
when some thread tests that barrier (any wait on it), like cp.async lands at its wait: until then
shared memory keeps its old bytes, as on a GPU where the copy may still be in flight. Landing
performs the copy's complete_tx. A wait that keeps failing on a barrier nothing can complete any
more (no copy in flight, its arrivals done, transaction bytes still owed) is the finding
`mbarrier-never-completes` naming the expect_tx whose byte count was wrong, and ends the launch.
"""
from __future__ import annotations

import numpy as np

from .findings import UnsupportedPTX
from .memory import SHARED_WINDOW
from .ops import PLAIN, builder, get, put
from .ops_mem import address

HANG_POLLS = 2000  # failed waits in a row on a barrier nothing can complete: a hang


class Barrier:
    __slots__ = ("expected", "init_line", "pending", "phase", "polls", "tx", "tx_line", "valid")

    def __init__(self, count: int, line):
        self.expected, self.pending, self.tx, self.phase = count, count, 0, 0
        self.polls, self.tx_line, self.init_line, self.valid = 0, None, line, True


class State:
    """Per launch: barriers by (block, offset), copies in flight by barrier, the check (or None)."""

    def __init__(self, eng):
        self.bars: dict[tuple[int, int], Barrier] = {}
        self.inflight: dict[tuple[int, int], list] = {}  # barrier key -> [land() closures]
        from .hopper_check import check_of
        self.check = check_of(eng)


def state(eng) -> State:
    st = getattr(eng, "hopper", None)
    if st is None:
        st = eng.hopper = State(eng)
    return st


def lanes_of(sel) -> np.ndarray:
    return np.arange(sel.start, sel.stop) if isinstance(sel, slice) else np.asarray(sel)


def shared_offsets(eng, inst, o):
    """sel -> int64 shared offsets of the operand (shared::cta/::cluster or generic addresses).
    A shared::cluster address names its CTA in bits 24 and up (ops_cluster.py); those are kept."""
    space = "shared" if any(m.startswith("shared") for m in inst.mods) else "generic"
    getaddr, const_addr = address(eng, inst, o, "shared" if space == "shared" else "global")

    def offs(sel):
        n = lanes_of(sel).size
        a = getaddr(sel) if getaddr is not None else const_addr
        a = np.broadcast_to(np.asarray(a), (n,)).astype(np.uint64)
        if space == "generic":
            a = a - np.uint64(SHARED_WINDOW)
        return a.astype(np.int64)
    return offs


def target_blocks(eng, lanes, offs):
    """(block ids, offsets in those blocks) for shared::cluster offsets of these lanes."""
    from .ops_cluster import resolve
    return resolve(eng, lanes, offs)


def _complete(st: State, key, bar: Barrier) -> None:
    if bar.pending <= 0 and bar.tx <= 0:
        bar.phase += 1
        bar.pending, bar.tx, bar.polls = bar.expected, 0, 0


def _bar(eng, inst, st, key, lanes):
    bar = st.bars.get(key)
    if bar is None or not bar.valid:
        eng.report("mbarrier-uninitialized", inst, lanes,
                   f"this mbarrier operation ({inst.opcode}) uses shared memory at byte offset {key[1]} that no "
                   "mbarrier.init has set up (or that mbarrier.inval retired): initialise it with "
                   "mbarrier.init (one thread), then fence.mbarrier_init / __syncthreads() before others use it",
                   address=key[1], space="shared", once=True)
    return bar


def arrive(eng, inst, st, key, lanes, count: int, tx: int = 0) -> int:
    """count arrivals (and tx expected bytes) on one barrier; returns the phase arrived in."""
    bar = _bar(eng, inst, st, key, lanes)
    if bar is None:
        return 0
    if tx:
        bar.tx += tx
        bar.tx_line = inst.line
    phase = bar.phase
    if bar.pending - count < 0 and st.check is not None:
        st.check.over_arrive(eng, inst, key, bar, lanes)
    bar.pending -= count
    bar.polls = 0
    _complete(st, key, bar)
    return phase


def complete_tx(eng, inst, st, key, nbytes: int, lanes=None) -> None:
    bar = st.bars.get(key)
    if bar is None:
        return
    bar.tx -= nbytes
    bar.polls = 0
    if bar.tx < 0 and st.check is not None:
        st.check.tx_underflow(eng, inst, key, bar, lanes)
    _complete(st, key, bar)


def land(eng, st: State, key) -> None:
    """Every copy in flight that signals this barrier lands now (oldest first)."""
    todo = st.inflight.pop(key, None)
    for fn in todo or ():
        fn()


def _per_barrier(eng, lanes, blocks, offs):
    keys = blocks * (1 << 32) + offs
    uk, inv = np.unique(keys, return_inverse=True)
    return [((int(k) >> 32, int(k) & 0xFFFFFFFF), lanes[inv == i]) for i, k in enumerate(uk.tolist())], inv


@builder("mbarrier", pipe="lsu")
def mbarrier(eng, inst):
    mods = set(inst.mods)
    o = inst.ops
    if "init" in mods:
        at, cnt = shared_offsets(eng, inst, o[0]), get(eng, inst, o[1], "u32")

        def run(sel):
            lanes = lanes_of(sel)
            blocks, offs = target_blocks(eng, lanes, at(sel))
            n = np.broadcast_to(np.asarray(cnt(sel)), lanes.shape)
            st = state(eng)
            for i, (b, f) in enumerate(zip(blocks.tolist(), offs.tolist())):
                st.bars[(b, f)] = Barrier(int(n[i]), inst.line)
                st.inflight.pop((b, f), None)
            if st.check is not None:
                st.check.barrier_init(blocks, offs)
        return PLAIN, run
    if "inval" in mods:
        at = shared_offsets(eng, inst, o[0])

        def run(sel):
            lanes = lanes_of(sel)
            blocks, offs = target_blocks(eng, lanes, at(sel))
            st = state(eng)
            for b, f in zip(blocks.tolist(), offs.tolist()):
                if (b, f) in st.bars:
                    st.bars[(b, f)].valid = False
        return PLAIN, run
    if "arrive" in mods or "arrive_drop" in mods or "expect_tx" in mods or "complete_tx" in mods:
        return _arrivals(eng, inst, mods, o)
    if "test_wait" in mods or "try_wait" in mods:
        return _wait(eng, inst, mods, o)
    if "pending_count" in mods:
        d, _s = put(eng, inst, o[0], "u32"), get(eng, inst, o[1], "u64")
        return PLAIN, lambda sel: d(sel, np.zeros(lanes_of(sel).size, np.uint32))
    raise UnsupportedPTX(inst.opcode, inst.file, inst.line)


def _arrivals(eng, inst, mods, o):
    only_tx = "arrive" not in mods and "arrive_drop" not in mods  # expect_tx / complete_tx alone
    dst = None
    if not only_tx and o[0].kind in ("reg", "sink") and len(o) >= 2 and o[1].kind == "addr":
        dst, o = (put(eng, inst, o[0], "b64") if o[0].kind == "reg" else None), o[1:]
    at = shared_offsets(eng, inst, o[0])
    arg = get(eng, inst, o[1], "u32") if len(o) > 1 else None
    with_tx = "expect_tx" in mods
    drop = "arrive_drop" in mods

    def run(sel):
        lanes = lanes_of(sel)
        blocks, offs = target_blocks(eng, lanes, at(sel))
        v = np.broadcast_to(np.asarray(arg(sel) if arg is not None else 1, np.int64), lanes.shape)
        st = state(eng)
        phases = np.zeros(lanes.size, np.uint64)
        groups, inv = _per_barrier(eng, lanes, blocks, offs)
        for i, (key, ls) in enumerate(groups):
            m = inv == i
            total = int(v[m].sum())
            if "complete_tx" in mods:
                complete_tx(eng, inst, st, key, total, ls)
            elif only_tx:  # expect_tx: more bytes owed, no arrival
                bar = _bar(eng, inst, st, key, ls)
                if bar is not None:
                    bar.tx += total
                    bar.tx_line = inst.line
            else:
                count = int(m.sum()) if with_tx or arg is None else total
                p = arrive(eng, inst, st, key, ls, count, total if with_tx else 0)
                if drop and key in st.bars:
                    st.bars[key].expected -= count
                phases[m] = p
        if dst is not None:
            dst(sel, phases)
    return PLAIN, run


def _wait(eng, inst, mods, o):
    d = put(eng, inst, o[0], "pred")
    at = shared_offsets(eng, inst, o[1])
    parity = "parity" in mods
    tok = get(eng, inst, o[2], "u32" if parity else "u64")

    def run(sel):
        lanes = lanes_of(sel)
        blocks, offs = target_blocks(eng, lanes, at(sel))
        t = np.broadcast_to(np.asarray(tok(sel)).astype(np.int64), lanes.shape)
        st = state(eng)
        ok = np.zeros(lanes.size, bool)
        groups, inv = _per_barrier(eng, lanes, blocks, offs)
        for i, (key, ls) in enumerate(groups):
            bar = _bar(eng, inst, st, key, ls)
            if bar is None:
                continue
            m = inv == i
            done = _done(bar, t[m], parity)
            if not done.all() and st.inflight.get(key):  # the copies complete while it waits
                land(eng, st, key)
                done = _done(bar, t[m], parity)
            ok[m] = done
            if st.check is not None and done.any():
                tids = eng.lane_tid[ls[done]]
                if parity:
                    st.check.observed_parity(key, bar, tids, t[m][done])
                else:
                    st.check.observed(key, bar, tids, t[m][done])
            if not done.all():
                bar.polls += 1
                if bar.polls >= HANG_POLLS and not st.inflight.get(key) and bar.pending <= 0 < bar.tx:
                    _hang(eng, inst, key, bar, ls[~done])
        if not ok.any():  # every poller waits on: its loop's back edge yields (engine.py), as a GPU's
            eng.poll_failed = True  # try_wait suspends the thread instead of spinning
        d(sel, ok)
    return PLAIN, run


def _done(bar, tokens, parity: bool) -> np.ndarray:
    """Whether each waiter's phase has completed: with parity, the phase of that parity before the
    running one; with a state token, the phase it arrived in."""
    if parity:
        return (tokens & 1) != (bar.phase & 1)
    return tokens < bar.phase


def _hang(eng, inst, key, bar, lanes) -> None:
    owed = bar.tx
    where = f"line {bar.tx_line}" if bar.tx_line is not None else "its expect_tx"
    eng.report("mbarrier-never-completes", inst, lanes,
               f"threads wait on the mbarrier at shared byte offset {key[1]} for a phase that can never complete: "
               f"every arrival is in and no copy is in flight, but {owed} transaction bytes are still expected "
               f"(the byte count given at {where} is more than the copies signalling this barrier deliver): "
               "expect_tx exactly the bytes the copies write (a TMA box's bytes, out-of-bounds parts included)",
               address=key[1], space="shared", once=True)
    eng.stopped = True


__all__ = ["arrive", "complete_tx", "land", "lanes_of", "mbarrier", "shared_offsets", "state"]
