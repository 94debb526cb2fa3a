"""Load and fault benchmark of `kata serve` (loopback only).

N simulated candidates join one server and upload at once (every fifth uploads a wrong kernel, the
rest the reference solution); each polls until its grade is back. Recorded: every upload graded and
none lost, p50/p95 from upload to report, grades per minute, and a grep of every byte the candidates
received for the secret seed and the kata's hidden cases. --kill-every S kills a running grading
process (SIGKILL) every S seconds: its upload must be regraded, not lost.

    python lab/server_load.py --candidates 50 --workers 2 --out lab/results/server/load.json
    python lab/server_load.py --candidates 50 --workers 2 --kill-every 30 --out ...
    python lab/server_load.py --backend gpu --candidates 20 --workers 1 --out ...   (on a GPU host)

Wall-clock figures depend on the machine and its load; the JSON records both.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(url: str, server: subprocess.Popen, timeout: float = 120) -> None:
    import urllib.request

    end = time.time() + timeout
    while time.time() < end:
        if server.poll() is not None:
            raise SystemExit(f"kata serve exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url + "/api/v1/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("kata serve did not start")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _call(url: str, token: str, method: str, path: str, body: dict | None, received: list) -> tuple[int, dict]:
    """One JSON request with the standard library (the GPU host has no httpx); keeps the raw body."""
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + "/api/v1" + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw, status = response.read(), response.status
    except urllib.error.HTTPError as error:
        raw, status = error.read(), error.code
    received.append(raw)
    return status, json.loads(raw or b"{}")


class Candidate(threading.Thread):
    def __init__(self, url: str, token: str, kata: str, files: dict, expected: str, poll_s: float, timeout_s: float):
        super().__init__(daemon=True)
        self.url, self.token, self.kata, self.files, self.expected = url, token, kata, files, expected
        self.poll_s, self.timeout_s = poll_s, timeout_s
        self.received: list[bytes] = []
        self.statuses: list[int] = []
        self.upload_to_report_s: float | None = None
        self.verdict: str | None = None
        self.error: str | None = None

    def _call(self, method: str, path: str, body: dict | None = None) -> dict:
        status, data = _call(self.url, self.token, method, path, body, self.received)
        self.statuses.append(status)
        if status >= 400:
            raise RuntimeError(f"{method} {path}: {status} {data.get('error')}")
        return data

    def run(self) -> None:
        try:
            self._call("POST", "/join", {})
            sent = time.time()
            sid = self._call("POST", "/submissions", {"kata": self.kata, "files": self.files})["submission"]["id"]
            end = sent + self.timeout_s
            while time.time() < end:
                view = self._call("GET", f"/submissions/{sid}")
                if view["state"] in ("done", "error"):
                    self.upload_to_report_s = time.time() - sent
                    self.verdict = (view.get("result") or {}).get("verdict")
                    return
                time.sleep(self.poll_s)
            self.error = "not graded within --timeout"
        except Exception as exc:  # recorded: the run reports it
            self.error = f"{type(exc).__name__}: {exc}"


def _killer(db, every: float, stop: threading.Event, kills: list) -> None:
    from sqlalchemy import select

    from grader.server.models import Submission

    while not stop.wait(every):
        with db.session() as s:
            row = s.scalars(select(Submission).where(Submission.state == "running", Submission.pid.is_not(None))
                            .limit(1)).first()
        if row is not None:
            try:
                os.kill(row.pid, signal.SIGKILL)
                kills.append({"at": time.time(), "submission": row.id, "pid": row.pid})
            except ProcessLookupError:
                pass


def _progress(db, out: Path, started: float) -> None:
    from sqlalchemy import select

    from grader.server.models import Submission

    with db.session() as s:
        rows = list(s.scalars(select(Submission)))
    done = [r for r in rows if r.state in ("done", "error")]
    out.parent.mkdir(parents=True, exist_ok=True)
    (out.parent / (out.stem + ".progress.json")).write_text(json.dumps({
        "elapsed_s": round(time.time() - started, 1), "uploads": len(rows), "graded": len(done),
        "verdicts": sorted((r.outcome or {}).get("verdict", "") for r in done),
        "grade_s": [(r.outcome or {}).get("grade_s") for r in done]}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cores-per-worker", type=int, default=1)
    parser.add_argument("--backend", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--kata", default="vector-add")
    parser.add_argument("--kill-every", type=float, default=0.0, help="SIGKILL a grading process every S s")
    parser.add_argument("--poll", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--estimate", action="store_true", help="CPU: also the H200 estimate on a pass")
    parser.add_argument("--grade-function", help="a stand-in grader (module:function), to try the script itself")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    # `timeout` (a device's time limit) sends SIGTERM: stop the server and its grading processes too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))

    from grader import catalog
    from grader.server import assignments
    from grader.server.database import Database

    kata = catalog.load(args.kata)
    solution = {n: (kata.solution_dir / n).read_text() for n in ("kernel.cu", "launch.py")}
    wrong_dir = kata.solution_dir / "wrong"
    wrong_cu = sorted(wrong_dir.glob("*.cu"))
    wrong = {"kernel.cu": wrong_cu[0].read_text(), "launch.py": solution["launch.py"]} if wrong_cu else None
    launch_wrong = wrong_cu[0].with_suffix(".launch.py") if wrong_cu else None
    if wrong and launch_wrong and launch_wrong.is_file():
        wrong["launch.py"] = launch_wrong.read_text()

    data = Path(tempfile.mkdtemp(prefix="kata-serve-bench-"))
    port = _port()
    url = f"http://127.0.0.1:{port}"
    db = Database(f"sqlite:///{data / 'server.db'}")
    made = assignments.create(db, name="load", katas=[args.kata], minutes=120, backend=args.backend)
    invited = assignments.invite(db, made.id, [f"c{i:02d}" for i in range(args.candidates)])
    command = [sys.executable, "-m", "grader", "serve", "--data", str(data), "--port", str(port),
               "--backend", args.backend, "--workers", str(args.workers),
               "--cores-per-worker", str(args.cores_per_worker)]
    if not args.estimate:
        command.append("--no-estimate")
    if args.grade_function:
        command += ["--grade-function", args.grade_function]
    log = open(data / "server.log", "wb")
    # ROOT first, and whatever PYTHONPATH already holds (a GPU host's extra wheels) after it.
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONPATH": path})
    try:
        try:
            _wait_up(url, server)
        except SystemExit:
            log.flush()
            print((data / "server.log").read_text(errors="replace")[-4000:], file=sys.stderr)
            raise
        clients = []
        for i, (_, token) in enumerate(invited):
            bad = wrong is not None and i % 5 == 4
            clients.append(Candidate(url, token, args.kata, wrong if bad else solution, "fail" if bad else "pass",
                                     args.poll, args.timeout))
        stop, kills = threading.Event(), []
        killer = threading.Thread(target=_killer, args=(db, args.kill_every, stop, kills), daemon=True)
        started = time.time()
        if args.kill_every:
            killer.start()
        for c in clients:
            c.start()
        while any(c.is_alive() for c in clients):
            time.sleep(2.0)
            if args.out:  # a run cut short (a device's time limit) still leaves its count
                _progress(db, args.out, started)
        wall = time.time() - started
        stop.set()
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()

    from sqlalchemy import func, select

    from grader.server.models import AuditEvent, Submission

    with db.session() as s:
        rows = list(s.scalars(select(Submission)))
        regrades = s.scalar(select(func.count()).select_from(AuditEvent).where(AuditEvent.kind == "requeued"))
    times = [c.upload_to_report_s for c in clients if c.upload_to_report_s is not None]
    from grader.grading import secret_cases

    drawn = secret_cases.draw(kata, made.secret_seed)  # the hidden cases the server drew: secret too
    secrets = [str(made.secret_seed)] + [str(v) for case in (*kata.hidden, *drawn) for v in case.values()
                                         if isinstance(v, int) and v > 100_000]
    received = b"".join(b for c in clients for b in c.received)
    leaked = sorted({s for s in secrets if s.encode() in received})
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": f"{os.cpu_count()} cores ({platform.machine()}), "
                   "shared with other work: wall-clock figures are noisy",
        "backend": args.backend, "kata": args.kata, "candidates": args.candidates, "workers": args.workers,
        "estimate": args.estimate, "kill_every_s": args.kill_every,
        "uploads_stored": len(rows), "graded": sum(r.state == "done" for r in rows),
        "errors": sum(r.state == "error" for r in rows),
        "pending_at_end": sum(r.state in ("queued", "running") for r in rows),
        "lost": args.candidates - len(rows) + sum(c.error is not None and "--timeout" not in c.error for c in clients),
        "client_errors": sorted({c.error for c in clients if c.error}),
        "verdicts_as_expected": sum(c.verdict == c.expected for c in clients),
        "upload_to_report_p50_s": round(statistics.median(times), 2) if times else None,
        "upload_to_report_p95_s": round(_percentile(times, 0.95), 2) if times else None,
        "upload_to_report_max_s": round(max(times), 2) if times else None,
        "wall_s": round(wall, 1), "grades_per_minute": round(len(times) / wall * 60, 2) if wall else None,
        "mean_grade_s": round(statistics.mean(r.outcome.get("grade_s", 0) for r in rows if r.outcome), 2)
        if rows else None,
        "kills": len(kills), "regrades": int(regrades or 0),
        "responses_checked": sum(len(c.received) for c in clients),
        "secrets_checked": len(secrets), "secrets_leaked": leaked,
        "http_statuses": sorted(set(st for c in clients for st in c.statuses)),
    }
    if args.out:
        (args.out.parent / (args.out.stem + ".server.log")).write_bytes((data / "server.log").read_bytes()[-200_000:])
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    ok = result["lost"] == 0 and not leaked
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
