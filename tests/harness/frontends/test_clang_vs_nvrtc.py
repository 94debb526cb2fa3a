"""NVRTC and clang agree on what a learner sees, so the Mac path is tested without a Mac.

Every solution and wrong kernel compiles under both, to PTX with the same kernels that the
emulator loads; a sample covering every kind of finding is graded with both (same seed, same
cases) and must get the same verdict, reasons, stage and first finding's line. The full catalogue
(every kernel graded twice) is `python lab/compare_frontends.py`, recorded in lab/results/;
a difference it finds goes into KNOWN with its reason, or is fixed.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab"))
from compare_frontends import grade_with, summary  # noqa: E402
from clang_fixtures import clang_folder, nvrtc_or_skip  # noqa: E402,F401  (fixtures)

from grader import catalog  # noqa: E402
from grader.catalog import wrong  # noqa: E402
from harness.emulator.ptx import load_ptx  # noqa: E402
from harness.frontends import clang, nvrtc  # noqa: E402

#: (kata, kernel) → why the two front ends differ there (the report still names the learner's file)
KNOWN: dict[tuple[str, str], str] = {}

#: one wrong kernel per kind of finding, from katas whose grades are quick, and two solutions
SLOW = pytest.mark.slow  # the sanitizer's full run (a race) or every case (a solution): ~10 s each
SAMPLE = [
    pytest.param("reduce", "missing_syncthreads", marks=SLOW),  # race-raw
    ("reduce", "missing_bounds_check"),  # out-of-bounds
    ("reduce", "too_many_threads"),  # launch-error
    ("reduce", "uninitialized_output"),  # wrong-answer from an unwritten output
    ("vector-add", "tail_off_by_one"),  # wrong-answer
    pytest.param("softmax", "reused_scratch_without_barrier", marks=SLOW),  # race-war
    ("histogram", "uninitialized_shared_histogram"),  # uninitialized-read
    ("spmv", "full_mask_after_early_exit"),  # deadlock
    ("cross-entropy", "assumes_aligned_rows"),  # misaligned (through __stcs: clang_extras.py)
    pytest.param("reduce", "solution", marks=SLOW),
    pytest.param("vector-add", "solution", marks=SLOW),
]


def _kernels():
    for kid in catalog.ids():
        kata = catalog.load(kid)
        yield kid, "solution"
        for m in wrong.mistakes(kid, kata.solution_dir):
            yield kid, m.name


def _source(kid: str, name: str) -> str:
    kata = catalog.load(kid)
    if name == "solution":
        return (kata.solution_dir / "kernel.cu").read_text()
    return wrong.kernel_source({m.name: m for m in wrong.mistakes(kid, kata.solution_dir)}[name])


def _entries(ptx: str) -> set[str]:
    return set(re.findall(r"\.entry\s+([\w$]+)", ptx))


@pytest.mark.parametrize("kid, name", list(_kernels()), ids=lambda v: str(v))
def test_compiles_alike(clang_folder, nvrtc_or_skip, kid, name):
    source = _source(kid, name)
    a = nvrtc.compile(source, "kernel.cu")
    b = clang.compile(source, "kernel.cu")
    assert (a.ok, b.ok) == (True, True), (a.errors, b.errors)
    assert _entries(a.ptx) == _entries(b.ptx)
    load_ptx(b.ptx, "kernel.cu")  # the emulator reads clang's PTX


@pytest.mark.parametrize("kid, name", SAMPLE, ids=lambda v: str(v))
def test_grades_alike(clang_folder, nvrtc_or_skip, tmp_path, monkeypatch, kid, name):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    folder = catalog.load(kid).solution_dir if name == "solution" else wrong.materialise(kid, name, tmp_path / name)
    got = {fe: summary(grade_with(fe, kid, folder, None)) for fe in ("nvrtc", "clang")}
    if (kid, name) in KNOWN:
        pytest.skip(KNOWN[(kid, name)])
    assert got["clang"] == got["nvrtc"]
