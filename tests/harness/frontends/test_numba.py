"""numba.cuda kernels graded on the CPU emulator: the solution passes, a missing cuda.syncthreads is
a race at its kernel.py line, a typing error is the compile stage at its line."""
import json
import shutil

import pytest

pytest.importorskip("numba.cuda")

from grader import catalog  # noqa: E402
from grader.catalog import wrong  # noqa: E402

SOLUTION = catalog.load("reduce").solution_dir / "numba"


def grade(kata, folder, *extra):
    r = kata("grade", str(folder), "--kata", "reduce", "--backend", "cpu", "--json", *extra)
    return r.exit_code, json.loads(r.output)


def test_the_solution_passes(kata):
    code, data = grade(kata, SOLUTION, "--case", "n=1025")
    assert code == 0 and data["verdict"] == "pass", data["headline"]
    assert data["findings"] == []


def test_a_full_cpu_grade_says_why_it_has_no_estimate(kata):
    # the H200 model follows CUDA C's one PTX module; it once failed here with a bare TypeError
    code, data = grade(kata, SOLUTION)
    assert code == 0 and data["verdict"] == "pass", data["headline"]
    notes = " ".join(data["notes"])
    assert "a Triton or numba kernel is compiled per launch" in notes and "Error" not in notes


def test_a_missing_syncthreads_is_a_race_at_the_tree_line(kata, tmp_path):
    ws = wrong.materialise("reduce", "missing_syncthreads", tmp_path / "wrong", lang="numba")
    line = next(i for i, text in enumerate((ws / "kernel.py").read_text().splitlines(), 1)
                if "partial[t] += partial[t + step]" in text)
    code, data = grade(kata, ws, "--case", "n=1025")
    assert code == 1 and "race-raw" in data["reasons"], data["headline"]
    race = [f for f in data["findings"] if f["kind"] == "race-raw"]
    assert race[0]["file"] == "kernel.py" and race[0]["line"] == line


def test_a_typing_error_is_the_compile_stage_at_its_line(kata, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    source = (SOLUTION / "kernel.py").read_text().replace("acc += x[i]", "acc += x[i] + undefined_name")
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "undefined_name" in text)
    (ws / "kernel.py").write_text(source)
    shutil.copy(SOLUTION / "launch.py", ws / "launch.py")
    code, data = grade(kata, ws, "--case", "n=33")
    assert code == 1 and data["stage"] == "compile" and data["reasons"] == ["compile-error"]
    assert f"kernel.py:{line}:" in data["headline"] and "undefined_name" in data["headline"]


def test_a_numpy_without_row_stack_still_compiles(tmp_path):
    """numpy 2.5 removed np.row_stack, which numba-cuda 0.30 registers an overload for (the H200
    image has that pair): the front end restores the alias before numba.cuda types anything."""
    import subprocess
    import sys

    script = (
        "import numpy as np\n"
        "if hasattr(np, 'row_stack'): del np.row_stack\n"
        "import importlib.util, pathlib\n"
        "from harness.frontends import numba as fe\n"
        f"path = pathlib.Path({str(SOLUTION / 'kernel.py')!r})\n"
        "spec = importlib.util.spec_from_file_location('k', path); m = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(m)\n"
        "(name, fn), = fe.kernels(m).items()\n"
        "arr = fe.numba_type('pointer', 'float32')\n"
        "print(len(fe.compile_kernel(fn, path, [arr, arr, fe.numba_type('scalar', 'int32')]).ptx))\n")
    root = SOLUTION.parents[2]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) > 1000


def test_a_replayed_two_kernel_plan_reaches_each_kernels_module():
    """The GPU timing replays a recorded plan with launches only (no prepare between them): the
    launch name must bring back its own kernel's module, not run in the last one compiled (on the
    H200 that was CUDA_ERROR_NOT_FOUND for the scan solution's second level)."""
    import numpy as np

    from harness.backends.cpu import CpuBackend
    from harness.backends.dialect import DialectBackend

    folder = catalog.load("scan").solution_dir / "numba"
    db = DialectBackend(CpuBackend(), folder / "kernel.py")
    n, chunk = 5000, 2048  # three chunks of one 2048-element tile each
    x = db.upload(np.arange(n, dtype=np.int32))
    y, sums = db.alloc(n, np.int32), db.alloc(3, np.uint32)
    record = []
    for name, grid, args in (("scan_reduce", (3, 1, 1), [x, sums, n, chunk]),
                             ("scan_chunk_sums", (1, 1, 1), [sums, 3]),
                             ("scan_downsweep", (3, 1, 1), [x, y, sums, n, chunk])):
        entry, block, shared, ready = db.prepare(name, grid, (256, 1, 1), 0, args, {})
        record.append((entry, grid, block, shared, ready))
        db.launch(entry, grid, block, shared, ready)
    assert record[0][0] != record[2][0]
    want = np.cumsum(np.arange(n))
    assert np.array_equal(db.download(y), want)
    db.memset(y, 0)
    for entry, grid, block, shared, ready in record:  # the replay: launches only
        db.launch(entry, grid, block, shared, ready)
    assert np.array_equal(db.download(y), want)
