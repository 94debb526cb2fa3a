"""The README's scenario through the CLI and the real pipeline on the CPU emulator: an interviewer
starts `kata serve`, makes an interview and invites a candidate; the candidate joins from another
folder, grades the public tests locally, submits; the server grades with the hidden tests; the
interviewer watches, reads the report in a browser, and exports the results."""
from __future__ import annotations

import json
import os
import re
import shutil

from click.testing import CliRunner

from grader import catalog
from grader.cli import cli
from tests.grader.server.conftest import free_port, serve_process, wait_up


def _kata(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args), prog_name="kata", catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_an_interview_on_a_server(tmp_path, monkeypatch, chromium):
    monkeypatch.setenv("COLUMNS", "200")  # the watch table whole
    data, port = tmp_path / "server", free_port()
    url = f"http://127.0.0.1:{port}"
    server = serve_process(data, port, "--workers", "1", "--no-estimate")
    try:
        wait_up(url)
        admin = ("serve", "admin", "--data", str(data))
        cases = tmp_path / "hidden.toml"
        cases.write_text('vector-add = [ { n = 777773, dist = "cancel" } ]\n')
        made = _kata(*admin, "create", "Onsite", "--katas", "vector-add", "--minutes", "30", "--invite", "ada",
                     "--hidden-cases", str(cases), "--url", url)
        join_line = next(line for line in made.output.splitlines() if "kata interview join" in line)
        candidate = re.search(r"candidate (\w+)", join_line).group(1)
        token = join_line.split()[-1]

        monkeypatch.chdir(tmp_path)
        joined = _kata("interview", "join", url, token, "--dir", "iv")
        assert "on the server's clock" in joined.output
        workspace = tmp_path / "iv" / "vector-add"
        assert (workspace / "kernel.cu").is_file() and (workspace / "statement.md").is_file()
        assert oct((tmp_path / "iv" / ".kata-remote").stat().st_mode)[-3:] == "600"
        monkeypatch.chdir(workspace)
        stub = _kata("interview", "grade", "--backend", "cpu", ok=False)
        assert stub.exit_code == 1 and "left on the server's clock" in stub.output

        solution = catalog.load("vector-add").solution_dir
        for name in ("kernel.cu", "launch.py"):
            shutil.copy(solution / name, workspace / name)
        assert _kata("interview", "grade", "--backend", "cpu").exit_code == 0
        submitted = _kata("interview", "submit")
        assert "received by the server" in submitted.output and "upload #1: pass" in submitted.output
        assert "hidden: pass" in submitted.output
        status = _kata("interview", "status")
        assert "left (server clock)" in status.output and "upload #1: pass" in status.output

        watched = _kata(*admin, "watch", "--once")
        assert "ada" in watched.output and "vector-add:pass" in watched.output
        shown = _kata(*admin, "report", candidate, "--url", url)
        assert "1/1 passed" in shown.output and "Secret seed (now revealed)" in shown.output
        link = shown.output.strip().splitlines()[-1].split(": ", 1)[1]
        dom = chromium("--dump-dom", link)
        assert 'data-stage="public">pass</td>' in dom and 'data-stage="hidden">pass</td>' in dom
        assert "this report link is not valid" in chromium("--dump-dom", link.replace("sig=", "sig=0"))

        rows = json.loads(_kata(*admin, "export", "--format", "json").output)
        assert rows[0]["name"] == "ada" and rows[0]["verdicts"] == {"vector-add": "pass"}
        csv_text = _kata(*admin, "export", "--format", "csv").output
        assert csv_text.splitlines()[1].endswith("ada,working,vector-add,pass,1,0")
        audit = _kata(*admin, "audit").output
        assert all(kind in audit for kind in ("invited", "joined", "upload", "grading", "graded"))
    finally:
        server.kill()
        server.wait()
    assert os.path.isfile(data / "server.db")
