"""Fixtures every test shares. Each test gets its own KATA_HOME (a temporary folder), so the suite
never writes into a developer's own kata store; the `kata` command runs through click's runner with
the backends a test wires in (`backends`), never by patching the grading pipeline.

The numpy fake backend (fakes.py) is found by module name, here and in the worker processes the
grades spawn: pyproject.toml puts tests/ on pytest's `pythonpath`.
"""

import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fakes import FAKE

KERNEL = '''extern "C" __global__ void reduce(const float* x, float* out, int n)
{
    if (threadIdx.x == 0 && n > 0) atomicAdd(out, x[0]);
}
'''


@pytest.fixture(autouse=True)
def kata_home(tmp_path, monkeypatch):
    """This test's own kata store."""
    home = tmp_path / "home"
    monkeypatch.setenv("KATA_HOME", str(home))
    monkeypatch.setenv("KATA_BENCH_AHEAD", "0")  # `kata start` makes no bench inputs ahead unless a test asks
    yield home
    # A dialect backend keeps each kernel.py's sandboxed process for the life of its (worker) process;
    # in the test process that would outlive the test and show up in a later test's process counts.
    dialect = sys.modules.get("harness.backends.dialect")
    if dialect is not None:
        for _, process in list(dialect._MODULES.values()):
            process.close()
        dialect._MODULES.clear()


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    """Run the test from its temporary folder (`kata start reduce` makes ./reduce there)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def backends() -> dict:
    """--backend value -> the BackendChoice the `kata` command uses instead (empty: the real ones)."""
    return {}


@pytest.fixture
def fake_choice():
    """The numpy fake backend (fakes.py), run by the real worker process."""
    from grader.pipeline import BackendChoice

    return BackendChoice(FAKE, "test backend")


@pytest.fixture
def fake_backend(backends, fake_choice):
    """`kata grade` (auto or --backend cpu) runs on the numpy fake instead of a GPU or the emulator."""
    backends.update(auto=fake_choice, cpu=fake_choice)
    return fake_choice


@pytest.fixture
def cpu_backend(backends):
    """`auto` means the CPU emulator here, even on a machine with a GPU."""
    import dataclasses

    from grader.pipeline import choose_backend

    backends["auto"] = dataclasses.replace(choose_backend("cpu"), flag="")  # a rerun repeats what was asked
    return backends["auto"]


@pytest.fixture
def kata(backends):
    """kata(*args, catch=False) -> click's Result of the `kata` command with the wired backends."""
    from grader.cli import cli

    runner = CliRunner()

    def invoke(*args, catch: bool = False):
        return runner.invoke(cli, [str(a) for a in args], catch_exceptions=catch, obj={"backends": backends})

    return invoke


def write_submission(folder, modes=(), launch=None, kernel=KERNEL):
    folder.mkdir(parents=True, exist_ok=True)
    extra = "".join(f'extern "C" __global__ void mode_{m}() {{}}\n' for m in modes)
    (folder / "kernel.cu").write_text(kernel + extra)
    if launch is not None:
        (folder / "launch.py").write_text(launch)
    (folder / ".kata").write_text('kata = "reduce"\n')
    return folder


@pytest.fixture
def submission(tmp_path):
    """submission(modes=(), launch=None, kernel=KERNEL) -> a reduce workspace; each mode_X kernel
    name makes the fake backend misbehave in way X."""

    def make(modes=(), launch=None, kernel=KERNEL):
        from grader.catalog import load

        plan = launch if launch is not None else load("reduce").file("launch.py").read_text()
        return write_submission(tmp_path / "ws", modes, plan, kernel)

    return make


@pytest.fixture(scope="session")
def clang_folder():
    """The clang front end's CUDA folder: made once (`kata setup` downloads it from PyPI when CI has
    not already), then named by KATA_CLANG_CUDA, since each test gets its own KATA_HOME."""
    from harness.frontends import clang, cuda_folder

    # CI installs ziglang (the dev extra) and reaches PyPI: there a missing front end is a failure
    miss = pytest.fail if os.environ.get("CI") else pytest.skip
    if not clang.available():
        miss("the clang front end is not installed (pip install ziglang)")
    saved = os.environ.pop("KATA_HOME", None)  # the folder lives in the real data dir, shared by runs
    try:
        root = cuda_folder.setup(say=lambda s: None)
    except cuda_folder.SetupNeeded as exc:
        miss(f"the clang front end's CUDA folder could not be made: {exc}")
    finally:
        if saved is not None:
            os.environ["KATA_HOME"] = saved
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cuda_folder.ENV, str(root))
        yield root
