"""The hostile-input corpus: what a new user (or a cheat) can throw at `kata grade`, and what kata
must answer: an exit code, a message naming the file (and line) and the next step, and nothing of
the learner's changed. Grades run on the numpy fake backend through the real worker, plan process
and sandbox; most cases stop before any grade (argument checks) or run one --case."""
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner


from grader.cli import cli  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from hostile_helpers import KERNEL  # noqa: E402

FAKE = "fakes:make"


@pytest.fixture(autouse=True)
def kata_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture(autouse=True)
def fake_backend(monkeypatch):
    from grader.grading import pipeline

    real = pipeline.choose_backend
    monkeypatch.setattr(pipeline, "choose_backend",
                        lambda requested: real(FAKE) if requested in ("auto", "cpu") else real(requested))


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
def kata():
    """kata(*args) -> (exit code, stdout + stderr); never raises, never shows a traceback unseen."""
    runner = CliRunner()

    def invoke(*args):
        result = runner.invoke(cli, [str(a) for a in args], catch_exceptions=True)
        text = result.output  # click >= 8.2: stdout and stderr as the terminal shows them
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, text
    return invoke
