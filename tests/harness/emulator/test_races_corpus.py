"""The schedule-bug corpus (tests/harness/emulator/corpus/races): kernels whose bug depends on the order
threads, warps, blocks or atomics run in, each with a right twin. Every wrong kernel's finding is
pinned: its kind, both source lines, whether the two threads share a block, the message's fix in
the kernel's language and the missing barrier's scope, and that it is the launch's first error
(the cause, not a symptom). Every twin is right, with no finding, under every schedule tried."""
import sys
from pathlib import Path

import numpy as np
import pytest

RACES = Path(__file__).parent / "corpus" / "races"
sys.path.insert(0, str(RACES))

import _races  # noqa: E402  (the corpus folder, put on the path just above)
import cases  # noqa: E402,F401  (registers the cases)

SCHEDULES = (1, 2, 3, 4)  # the emulator's non-default schedules tried on order-dependent pairs


def _needs(c):
    if c.source.endswith(".py"):
        pytest.importorskip("numba")


def test_the_corpus_has_thirty_kernels_in_pairs():
    kernels = {(c.source, k) for c in _races.CASES.values() for k in (c.wrong, c.right, *c.extra)}
    assert len(kernels) >= 30
    assert len({(c.source, c.wrong) for c in _races.CASES.values()}) == len(_races.CASES)  # one wrong kernel each


def _run(c, kernel, **options):
    dev = _races.Device(c.source, **options)
    try:
        c.run(dev, np.random.default_rng(0), kernel)
        return dev, None
    except AssertionError as exc:
        return dev, str(exc)


@pytest.mark.parametrize("name", sorted(_races.CASES))
def test_the_right_twin_is_right_and_clean(name):
    c = _races.CASES[name]
    _needs(c)
    dev, wrong = _run(c, c.right)
    assert wrong is None, wrong
    assert [f"{f.kind} {f.where()}" for f in dev.emu.findings] == []


@pytest.mark.parametrize("name", sorted(n for n, c in _races.CASES.items() if c.expect.kind != "order-dependent"))
def test_the_wrong_kernel_is_named_by_its_cause(name):
    c = _races.CASES[name]
    _needs(c)
    e = c.expect
    dev, _ = _run(c, c.wrong)
    errors = [f for f in dev.emu.findings if f.severity == "error"]
    line = _races.line_of(c.source, e.line)
    hits = [f for f in errors if f.kind == e.kind and f.line == line]
    assert hits, f"want {e.kind} at line {line}, got {[(f.kind, f.line) for f in dev.emu.findings]}"
    f = hits[0]
    if e.headline:
        assert (errors[0].kind, errors[0].line) == (e.kind, line), [(g.kind, g.line) for g in errors]
    if e.other is not None:
        assert f.other_line == _races.line_of(c.source, e.other), f.message
    if e.blocks is not None:
        assert f.other_block is not None and (f.other_block == f.block) == (e.blocks == "same"), f.message
    for phrase in e.says:
        assert phrase in f.message, f"{phrase!r} not in: {f.message}"
    for phrase in e.never:
        assert phrase not in f.message, f"{phrase!r} in: {f.message}"


ORDERED = sorted(n for n, c in _races.CASES.items() if c.cls in ("atomic-order", "cross-block", "warp-order"))


@pytest.mark.parametrize("name", ORDERED)
def test_an_order_dependent_result_shows_as_a_mismatch_under_another_schedule(name):
    c = _races.CASES[name]
    _, wrong = _run(c, c.wrong, sanitize=False)
    assert wrong is None, "the default order (lockstep, lane-ordered atomics) hides it"
    failing = [s for s in SCHEDULES if _run(c, c.wrong, sanitize=False, schedule=s)[1] is not None]
    assert failing, "no schedule tried shows it"
    again = _run(c, c.wrong, sanitize=False, schedule=failing[0])[1]
    assert again is not None, "a schedule number reproduces its run"
    if c.cls == "atomic-order":  # the atomics whose returned values moved are named
        dev, _ = _run(c, c.wrong, sanitize=False, schedule=failing[0])
        lines = {line for r in dev.results for _, line in r.atomic_order}
        assert _races.line_of(c.source, c.expect.line) in lines


@pytest.mark.parametrize("name", sorted(_races.CASES))
def test_the_right_twin_is_right_and_clean_under_other_schedules(name):
    c = _races.CASES[name]
    _needs(c)
    for s in SCHEDULES[:2]:
        dev, wrong = _run(c, c.right, schedule=s)
        assert wrong is None, f"schedule {s}: {wrong}"
        assert [f"{f.kind} {f.where()}" for f in dev.emu.findings] == [], f"schedule {s}"


def test_an_address_made_from_an_unwritten_value_is_reported_as_that_read_first():
    # under a schedule that starts half the grid at a time, the first blocks gather through
    # entries the later blocks have not written: the garbage index reads out of bounds
    c = _races.CASES["inverse_gather"]
    dev, wrong = _run(c, c.wrong, schedule=1)
    assert wrong is not None
    errors = [f for f in dev.emu.findings if f.severity == "error"]
    read = _races.line_of(c.source, "inv-read")
    assert (errors[0].kind, errors[0].line, errors[0].space) == ("uninitialized-read", read, "global")
    oob = [f for f in errors if f.kind == "out-of-bounds"]
    assert oob and f"first read memory nothing had written, at races_global.cu:{read}" in oob[0].message


def test_fixes_are_named_in_the_kernel_language():
    from harness.emulator.sanitizer_report import fix, language_of

    assert language_of("kernel.cu", "reduce") == "cuda"
    assert language_of("kernel.py", "_ZN6kernel6reduceB2v1E5ArrayIfLi1E1C7mutable7alignedE") == "numba"
    assert language_of("kernel.py", "add_kernel") == "triton"
    assert fix("__syncthreads()", "numba") == "cuda.syncthreads()"
    assert fix("atomicAdd()", "triton") == "tl.atomic_add()"
    assert fix("__syncwarp()", "cuda") == "__syncwarp()"


def test_a_grid_wide_wait_under_a_schedule_stops_at_the_budget_instead_of_hanging():
    # a software grid barrier waits for every block; a schedule with half the grid resident never
    # starts the rest, so the launch spins until the issue budget stops it (the grade skips that schedule)
    sys.path.insert(0, str(RACES.parent))
    import _corpus

    from harness.backends.cpu import SCHEDULE_BUDGET

    assert SCHEDULE_BUDGET <= 1_000_000
    dev = _corpus.Device("misc_idioms", schedule=1, instruction_budget=200_000, sanitize=False)
    n, grid = 2000, 4
    x = np.ones(n, np.float32)
    y, part, sync = dev.empty(n, np.float32), dev.empty(grid, np.float32), dev.zeros(2, np.uint32)
    res = dev.emu.launch(dev.mod, "center_grid_sync", grid=(grid, 1, 1), block=(128, 1, 1),
                         args=[dev.upload(x), y, part, sync, n])
    assert res.stopped and [f.kind for f in res.findings] == ["watchdog"]


def test_warp_waves_come_from_the_schedule_number():
    # even schedules run the upper half of a block's warps first (the default's reverse), odd ones
    # a shuffled half; the same number gives the same waves, and a one-warp block has no order
    from harness.emulator.schedule import Schedule

    assert Schedule(2, 0).late_warps(8).tolist() == [True] * 4 + [False] * 4
    odd = Schedule(3, 0).late_warps(7)
    assert odd.sum() == 3 and (odd == Schedule(3, 0).late_warps(7)).all()
    assert Schedule(1, 0).late_warps(1) is None
