"""The hostile-input corpus: what a new user (or a cheat) can throw at `kata grade`, and what kata
must answer: an exit code, a message naming the file (and line) and the next step, and nothing of
the learner's changed. Grades run on the numpy fake backend through the real worker, plan process
and sandbox; most cases stop before any grade (argument checks) or run one --case."""

from pathlib import Path

import pytest

from hostile_helpers import KERNEL


@pytest.fixture(autouse=True)
def _on_the_fake(in_tmp, fake_backend):
    """Run from the test's temporary folder, grades on the numpy fake backend."""
    return fake_backend


@pytest.fixture
def on_cpu(backends, cpu_backend):
    """Grades through the `kata` command on the CPU emulator instead of the fake."""
    from grader.pipeline import choose_backend

    backends["cpu"] = choose_backend("cpu")


@pytest.fixture
def workspace(tmp_path):
    def make(launch: str | None = None, kernel: str = KERNEL, kata: str = "reduce") -> Path:
        from grader.catalog import load

        folder = tmp_path / "ws"
        folder.mkdir(exist_ok=True)
        (folder / "kernel.cu").write_text(kernel)
        (folder / "launch.py").write_text(launch if launch is not None else load(kata).file("launch.py").read_text())
        (folder / ".kata").write_text(f'kata = "{kata}"\n')
        return folder

    return make


@pytest.fixture
def kata(kata):
    """kata(*args) -> (exit code, stdout + stderr); never raises, never shows a traceback unseen."""

    def invoke(*args):
        result = kata(*args, catch=True)
        text = result.output  # click >= 8.2: stdout and stderr as the terminal shows them
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, text

    return invoke
