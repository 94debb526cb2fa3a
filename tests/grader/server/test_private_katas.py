"""A private kata, through the CLI and the real pipeline on the CPU emulator: the interviewer adds their
own kata folder to a server (`kata serve admin kata add`); a candidate whose kata has never seen it
joins, grades the public tests locally, and submits; the server grades with hidden cases drawn from
the assignment's secret seed. Nothing the candidate's side receives holds the seed, a hidden case or
the solution; a kernel that passes every case the candidate could know (the public ones, and a built-in
kata's kata.toml hidden ones) fails on the secret ones."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from grader import catalog
from grader.catalog import roots
from grader.cli import cli
from grader.errors import UnknownKata
from tests.grader.server.conftest import ROOT, free_port, serve_process, wait_up

PRIVATE = Path(__file__).with_name("private") / "vector-sub"
HIDDEN_N = (70001, 40963)  # vector-sub's kata.toml hidden cases: on the server only

# A kernel written against the hidden cases a candidate could read: correct for the sizes kata.toml
# names, and for every size up to 64 blocks of 256 threads; past that (no grid-stride loop) it leaves
# the tail unwritten.
CHEAT_KERNEL = """extern "C" __global__ void vector_sub(const float* a, const float* b, float* c, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] - b[i];
}
"""
CHEAT_LAUNCH = """def launch(gpu, a, b, c, n):
    blocks = gpu.cdiv(n, 256) if n in (70001, 40963) else min(gpu.cdiv(n, 256), 64)
    gpu.launch("vector_sub", grid=blocks, block=256, args=(a, b, c, n))
"""


def _admin(data: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    """`kata serve admin ...` as the interviewer runs it, in another process (another shell)."""
    env = {**os.environ, "KATA_HOME": str(home)}
    env.pop(roots.ENV, None)
    return subprocess.run([sys.executable, "-m", "grader", "serve", "admin", "--data", str(data), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def _kata(*args: str, code: int = 0):
    result = CliRunner().invoke(cli, list(args), prog_name="kata", catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


@pytest.fixture
def candidate_side(monkeypatch, tmp_path):
    """A candidate's machine: its own KATA_HOME, no extra katas, and every response body recorded."""
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "candidate-home"))
    monkeypatch.setenv(roots.ENV, "")
    catalog.load.cache_clear()
    received: list[bytes] = []
    real_send = httpx.Client.send

    def send(self, request, **kwargs):
        response = real_send(self, request, **kwargs)
        response.read()
        received.append(response.content)
        return response

    monkeypatch.setattr(httpx.Client, "send", send)
    yield received
    catalog.load.cache_clear()


def test_a_private_kata_is_joined_graded_locally_and_graded_on_the_server_with_secret_cases(
        tmp_path, monkeypatch, candidate_side):
    from grader.grading import secret_cases
    from grader.server.database import Database
    from grader.server.models import Assignment

    data, home, port = tmp_path / "server", tmp_path / "interviewer-home", free_port()
    url = f"http://127.0.0.1:{port}"
    added = _admin(data, home, "kata", "add", str(PRIVATE))  # graded: the stub fails, the solution passes
    assert added.returncode == 0, added.stdout + added.stderr
    assert "ok solution: pass" in added.stdout and "private kata vector-sub added" in added.stdout
    assert "vector-sub" in _admin(data, home, "kata", "list").stdout
    made = _admin(data, home, "create", "Onsite", "--katas", "vector-sub", "--minutes", "30", "--show", "public",
                  "--invite", "ada", "--url", url)
    assert made.returncode == 0, made.stderr
    join_line = next(line for line in made.stdout.splitlines() if "kata interview join" in line)
    candidate, token = re.search(r"candidate (\w+)", join_line).group(1), join_line.split()[-1]
    server = serve_process(data, port, "--workers", "1", "--no-estimate")
    try:
        wait_up(url)
        with pytest.raises(UnknownKata):  # the candidate's kata has never seen it
            catalog.load("vector-sub")
        monkeypatch.chdir(tmp_path)
        _kata("interview", "join", url, token, "--dir", "iv")
        session, workspace = tmp_path / "iv", tmp_path / "iv" / "vector-sub"
        assert sorted(p.name for p in workspace.iterdir()) == [".kata", "kernel.cu", "launch.py", "statement.md"]
        copy = session / ".katas" / "vector-sub"
        assert sorted(p.name for p in copy.iterdir()) == ["kata.toml", "launch.py", "reference.py", "statement.md",
                                                         "stub.cu"]  # no solution/
        public_toml = (copy / "kata.toml").read_text()
        assert "hidden" not in public_toml and "SECRET-COMMENT" not in public_toml and "4099" in public_toml

        monkeypatch.chdir(workspace)
        assert "fails for n = 1" in _kata("interview", "grade", "--backend", "cpu", code=1).output
        for name in ("kernel.cu", "launch.py"):  # the candidate writes a correct kernel
            shutil.copy(PRIVATE / "solution" / name, workspace / name)
        assert "pass" in _kata("interview", "grade", "--backend", "cpu").output
        passed = _kata("interview", "submit").output
        assert "upload #1: pass" in passed and "hidden: pass" in passed

        (workspace / "kernel.cu").write_text(CHEAT_KERNEL)
        (workspace / "launch.py").write_text(CHEAT_LAUNCH)
        assert "pass" in _kata("interview", "grade", "--backend", "cpu").output  # every public case
        cheat = _kata("interview", "submit", code=1).output
        assert "upload #2: fail" in cheat and "public: pass" in cheat and "hidden: fail" in cheat
    finally:
        server.kill()
        server.wait()

    db = Database(f"sqlite:///{data / 'server.db'}")
    with db.session() as s:
        (assignment,) = s.query(Assignment).all()
        seed = assignment.secret_seed
    db.close()
    drawn = secret_cases.draw(catalog.load_folder(PRIVATE), seed)
    report = _admin(data, home, "report", candidate, "--url", url)
    assert report.returncode == 0, report.stderr
    failed_n = int(re.search(r"fails for n = (\d+)", report.stdout).group(1))
    assert failed_n in [case["n"] for case in drawn] and failed_n not in HIDDEN_N  # a secret case decided

    received = b"".join(candidate_side)
    assert received.count(b'"kata"') >= 3  # join, two uploads, their grades: the recording works
    secrets = [str(seed), *(str(n) for n in HIDDEN_N), *(str(case["n"]) for case in drawn), "SECRET-COMMENT",
               "PRIVATE-SOLUTION", "the kernel's grid-stride loop covers the rest"]
    assert [s for s in secrets if s.encode() in received] == []


def _bad_kata(tmp_path: Path, name: str = "vector-sub") -> Path:
    folder = tmp_path / "bad" / name
    shutil.copytree(PRIVATE, folder)
    return folder


def _refused(result: subprocess.CompletedProcess, *expected: str) -> str:
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    assert "Traceback" not in out and all(e in out for e in expected), out
    return out


def test_bad_private_katas_are_refused_with_a_message_naming_the_file(tmp_path):
    data, home = tmp_path / "server", tmp_path / "home"
    _refused(_admin(data, home, "kata", "add", str(tmp_path / "nowhere")), "no such folder")

    missing = _bad_kata(tmp_path)
    (missing / "reference.py").unlink()
    _refused(_admin(data, home, "kata", "add", str(missing), "--no-grade"), "reference.py: missing")

    broken = _bad_kata(tmp_path / "2")
    toml = broken / "kata.toml"
    toml.write_text(toml.read_text().replace('level = "warm-up"', 'level = "easy"'))
    _refused(_admin(data, home, "kata", "add", str(broken), "--no-grade"), str(toml),
             "level 'easy' is not one of")
    toml.write_text(toml.read_text().replace('[tolerance]', '[tolerance'))
    _refused(_admin(data, home, "kata", "add", str(broken), "--no-grade"), str(toml), "not valid TOML", "line")

    no_todo = _bad_kata(tmp_path / "3")
    (no_todo / "stub.cu").write_text((no_todo / "stub.cu").read_text().replace("TODO", "to do"))
    _refused(_admin(data, home, "kata", "add", str(no_todo), "--no-grade"), "stub.cu: expected has TODO")

    no_solution = _bad_kata(tmp_path / "4")
    shutil.rmtree(no_solution / "solution")
    _refused(_admin(data, home, "kata", "add", str(no_solution), "--no-grade"),
             "solution files: expected kernel.cu + launch.py")

    shutil.copytree(ROOT / "katas" / "vector-add", tmp_path / "5" / "vector-add")
    _refused(_admin(data, home, "kata", "add", str(tmp_path / "5" / "vector-add"), "--no-grade"),
             "a kata the package ships")

    assert _admin(data, home, "kata", "add", str(PRIVATE), "--no-grade").returncode == 0
    _refused(_admin(data, home, "kata", "add", str(PRIVATE), "--no-grade"), "already has a private kata vector-sub")
    assert _admin(data, home, "create", "Onsite", "--katas", "vector-sub").returncode == 0
    _refused(_admin(data, home, "kata", "remove", "vector-sub"), "part of 1 assignment")
    _refused(_admin(data, home, "kata", "remove", "nothing-here"), "no private kata nothing-here")


def test_the_hidden_suite_is_the_secret_draw_then_kata_toml_then_the_interviewers():
    from grader.grading import secret_cases
    from grader.server.grade_job import hidden_suite

    kata = catalog.load("vector-add")
    extra = [{"n": 777773}]
    suite = hidden_suite("vector-add", 42, extra)
    assert suite == (*secret_cases.draw(kata, 42), *kata.hidden, *extra)
    assert suite == hidden_suite("vector-add", 42, extra)  # a regrade after a crash: the same cases
    assert suite[:2] != hidden_suite("vector-add", 43, extra)[:2]  # another interview: others


def test_a_candidate_never_writes_a_servers_file_outside_the_kata_folder(tmp_path):
    from grader.errors import UsageError
    from grader.server import client

    for name in ("../escaped.py", "/tmp/absolute.py"):
        with pytest.raises(UsageError, match="stay inside its folder"):
            client._private_copy(tmp_path / "iv" / ".katas" / "k", {name: "x"})
    assert not (tmp_path / "iv" / ".katas" / "escaped.py").exists()


def test_a_private_katas_public_part_has_no_hidden_cases_no_comments_and_no_solution():
    from grader.server import private_katas

    files = private_katas.read_folder(PRIVATE)
    assert "solution/kernel.cu" in files and "kata.toml" in files
    public = private_katas.public_files(files)
    assert sorted(public) == ["kata.toml", "launch.py", "reference.py", "statement.md", "stub.cu"]
    assert "hidden" not in public["kata.toml"] and "#" not in public["kata.toml"]
    assert "solution/kernel.cu" not in private_katas.grading_files(files)


def test_a_private_kata_is_kept_in_postgresql_too(postgres_url):
    from grader.server import private_katas
    from grader.server.database import Database

    database = Database(postgres_url)
    try:
        with database.engine.begin() as c:
            c.exec_driver_sql("TRUNCATE private_katas")
        private_katas.add(database, PRIVATE, grade=False)
        stored = private_katas.files_of(database, "vector-sub")
        assert stored == private_katas.read_folder(PRIVATE)  # every file, byte for byte
        assert [k.id for k in private_katas.listing(database)] == ["vector-sub"]
        private_katas.remove(database, "vector-sub")
        assert private_katas.files_of(database, "vector-sub") is None
    finally:
        database.close()
