import pytest
from click.testing import CliRunner

from grader.cli import cli


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
