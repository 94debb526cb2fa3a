import sys
from pathlib import Path

import pytest
from click.testing import CliRunner


from grader.cli import cli  # noqa: E402

FAKE = "fakes:make"


@pytest.fixture(autouse=True)
def kata_home(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path / "home"


@pytest.fixture
def kata():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(cli, list(args), catch_exceptions=False)
    return invoke


@pytest.fixture
def fake_backend(monkeypatch):
    """Grades run on the numpy fake (through the real worker) instead of a GPU or the emulator."""
    from grader.grading import pipeline

    real = pipeline.choose_backend
    monkeypatch.setattr(pipeline, "choose_backend",
                        lambda requested: real(FAKE) if requested in ("auto", "cpu") else real(requested))


@pytest.fixture
def cpu_backend(monkeypatch):
    """`auto` means the CPU emulator here even on a machine with a GPU."""
    from grader.grading import pipeline

    real = pipeline.choose_backend
    monkeypatch.setattr(pipeline, "choose_backend", lambda requested: real("cpu" if requested == "auto" else requested))
