"""A real server on a loopback port (uvicorn in a thread, grading slots as in `kata serve`), with the
pipeline replaced by tests/grader/server/fake_grade.py so the server's own behaviour is tested in seconds;
test_serve_end_to_end.py grades with the real pipeline.

PostgreSQL: `postgres_url` starts a throwaway cluster (initdb, pg_ctl) on a unix socket in a temporary
folder, or skips saying why (no PostgreSQL binaries: `apt-get install postgresql`).
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
FAKE = "tests.grader.server.fake_grade:grade"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("KATA_HOME", str(tmp_path / "home"))
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{path}" if path else str(ROOT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RunningServer:
    def __init__(self, db, url, pool, server, thread):
        self.db, self.url, self.pool, self.server, self.thread = db, url, pool, server, thread
        self.responses: list[bytes] = []  # every body a candidate-side client received

    def client(self, token: str) -> httpx.Client:
        def keep(response):
            response.read()
            self.responses.append(response.content)

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url + "/api/v1", headers=headers,
                            timeout=30, event_hooks={"response": [keep]})

    def stop(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)


def start_server(db, *, workers=1, limits=None, pool=True, grade_function=FAKE) -> RunningServer:
    import uvicorn

    from grader.server import pool as pools
    from grader.server.app import Limits, create_app

    config = pools.PoolConfig(workers, "cpu", grade_function=grade_function, estimate=False, poll_s=0.1)
    local = pools.LocalPool(db, config) if pool else None
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(db, limits or Limits(), local), host="127.0.0.1",
                                           port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return RunningServer(db, f"http://127.0.0.1:{port}", local, server, thread)


@pytest.fixture
def db(tmp_path):
    from grader.server.database import Database

    database = Database(f"sqlite:///{tmp_path / 'server.db'}")
    yield database
    database.close()


@pytest.fixture
def served(db):
    running = start_server(db)
    yield running
    running.stop()


def make_assignment(db, names=("ada",), **options):
    from grader.server import assignments

    made = assignments.create(db, name="test", katas=options.pop("katas", ["vector-add"]), **options)
    return made, assignments.invite(db, made.id, list(names))


def wait_graded(client: httpx.Client, submission_id: int, timeout: float = 60) -> dict:
    end = time.time() + timeout
    while time.time() < end:
        view = client.get(f"/submissions/{submission_id}").json()
        if view["state"] in ("done", "error"):
            return view
        time.sleep(0.1)
    raise AssertionError(f"submission {submission_id} not graded in {timeout} s: {view}")


def _postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found and (Path(found).resolve().parent / "createdb").is_file():  # Debian links initdb alone
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL cluster on a unix socket; skipped where PostgreSQL is not installed."""
    bin_dir = _postgres_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql): its tests are skipped")
    # Not under pytest's folder: its parents are private to this user, and the cluster may run as
    # another (postgres) user.
    folder = Path(tempfile.mkdtemp(prefix="kata-pg-"))
    data, sock = folder / "data", folder / "sock"
    sock.mkdir()
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root: run the cluster as the postgres user
        if shutil.which("runuser") is None or subprocess.run(["id", "postgres"], capture_output=True).returncode:
            pytest.skip("running as root without a postgres user: PostgreSQL tests skipped")
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(folder, "postgres")
        shutil.chown(sock, "postgres")
    init = subprocess.run([*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", "kata", "--auth=trust",
                           "-E", "UTF8"], capture_output=True, text=True)
    if init.returncode:
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    opts = f"-k {sock} -c listen_addresses='' -c fsync=off"
    start = subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-o", opts, "-w", "-l",
                            str(folder / "log"), "start"], capture_output=True, text=True)
    if start.returncode:
        pytest.skip(f"pg_ctl start failed: {start.stderr.strip()[-300:]}")
    subprocess.run([*as_user, str(bin_dir / "createdb"), "-h", str(sock), "-U", "kata", "kata"], check=True)
    yield f"postgresql+psycopg://kata@/kata?host={sock}"
    subprocess.run([*as_user, str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                   capture_output=True)
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def chromium(tmp_path):
    """Headless Chromium with a throwaway profile: run(*args) -> stdout; skips where it is absent."""
    from tests.grader.practice.conftest import CHROMIUM, CHROMIUM_FLAGS

    if CHROMIUM is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")

    def run(*args: str) -> str:
        command = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=120).stdout

    return run


def serve_process(data, port, *extra: str, lease_s: float = 30):
    """`kata serve` as an interviewer starts it, in its own process."""
    import sys

    env = {**os.environ, "KATA_SERVER_LEASE_S": str(lease_s)}
    return subprocess.Popen([sys.executable, "-m", "grader", "serve", "--data", str(data), "--port", str(port),
                             "--backend", "cpu", *extra], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_up(url: str, timeout: float = 60) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            if httpx.get(url + "/api/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(f"the server at {url} did not start")
