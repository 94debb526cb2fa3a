"""harness/sandbox/jail.py where the machine refuses namespaces: the kernel process still runs (as
before, with the counted watch of its scratch folder) and the grade's notes say what it lacks; and
the words for each limit kernel.py can run into."""
import errno
import json
import os
import sys

import pytest

from grader.grading import grade_notes
from harness.sandbox import jail

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="namespaces are Linux's")


def _enter_in_child(tmp_path, refuse_namespaces: bool) -> dict:
    """jail.enter in a forked child (it forks again and waits): what it put in place, and whether
    the jailed process could write its scratch folder."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            if refuse_namespaces:
                jail._unshare = lambda flags: -1
            j = jail.enter(str(scratch))
            with open(scratch / "cache", "w") as f:
                f.write("x")
            if os.fork() == 0:  # a process kernel.py started, which would outlive it
                import time

                time.sleep(60)
                os._exit(0)
            seen = {"tmpfs": j.tmpfs, "pid_namespace": j.pid_namespace, "tasks": j.tasks, "uid": os.getuid(),
                    "missing": j.missing, "listed": os.listdir(scratch)}
            os.write(write, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    got = json.loads(os.read(read, 1 << 16) or b"{}")
    os.close(read)
    got["left"] = os.listdir(scratch)
    return got


def test_without_namespaces_the_kernel_process_runs_as_before_and_says_so(tmp_path):
    got = _enter_in_child(tmp_path, refuse_namespaces=True)
    assert got["listed"] == ["cache"] and not got["tmpfs"] and not got["pid_namespace"]
    assert any("watch every 0.1 s" in m for m in got["missing"]), got["missing"]
    assert any("pid namespace" in m for m in got["missing"]), got["missing"]
    if os.geteuid() == 0:  # a uid of its own needs no namespace: the cap holds
        assert got["uid"] >= jail.UID_BASE and got["tasks"] == jail.TASKS
    assert got["left"] == ["cache"]  # no tmpfs: the file is in the worker's folder, which it removes
    if os.geteuid() == 0:  # the sleeping child was swept by uid when the jailed process ended
        assert not _processes_of(got["uid"])


def _processes_of(uid: int) -> list[str]:
    """Live processes of uid, after a moment for a killed one to be gone."""
    import time

    deadline = time.monotonic() + 5
    while _listed(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _listed(uid)


def _listed(uid: int) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as f:
                if any(line.startswith("Uid:") and int(line.split()[1]) == uid for line in f):
                    found.append(entry)
        except (OSError, ValueError):
            continue
    return found


def test_with_namespaces_the_scratch_is_a_tmpfs_that_vanishes(tmp_path):
    if jail.probe():
        pytest.skip("this machine allows no jail: " + "; ".join(jail.probe()))
    got = _enter_in_child(tmp_path, refuse_namespaces=False)
    assert got["tmpfs"] and got["pid_namespace"] and got["tasks"] == jail.TASKS and not got["missing"]
    assert got["listed"] == ["cache"] and got["left"] == []
    if os.geteuid() == 0:  # the sleeping child died with the pid namespace
        assert not _processes_of(got["uid"])


def test_probe_and_grade_notes_name_what_is_missing(monkeypatch):
    monkeypatch.setattr(jail, "_unshare", lambda flags: -1)
    jail.probe.cache_clear()
    try:
        missing = jail.probe()
        assert any("not a capped tmpfs" in m for m in missing), missing
        assert any("pid namespace" in m for m in missing), missing
        notes = grade_notes.sandbox_notes(python_kernel=True)
        assert any("kernel.py's process ran with weaker limits" in n for n in notes), notes
        assert not any("kernel.py" in n for n in grade_notes.sandbox_notes(python_kernel=False))
    finally:
        jail.probe.cache_clear()


@pytest.mark.parametrize("error, words", [
    (OSError(errno.ENOSPC, "No space left on device"), "filled its scratch folder"),
    (OSError(errno.EFBIG, "File too large"), "a file over 64 MiB"),
    (BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"), "more than 64 processes and threads"),
    (RuntimeError("can't start new thread"), "more than 64 processes and threads"),
])
def test_each_limit_is_named(error, words):
    capped = jail.Jail(tasks=jail.TASKS)
    try:  # as kernel.py's error reaches the kernel process: wrapped, its cause hidden
        try:
            raise error
        except Exception:
            raise ValueError("while importing it") from None
    except ValueError as wrapped:
        assert words in jail.explain(wrapped, capped)
    assert jail.explain(ValueError("a bug of kernel.py's"), capped) is None
    assert jail.explain(BlockingIOError(errno.EAGAIN, "x"), jail.Jail()) is None  # no cap: not ours


@pytest.mark.skipif(os.geteuid() != 0, reason="root's jail takes a uid of its own")
def test_without_a_pid_namespace_the_worker_sweeps_the_uid_when_it_kills_the_process(tmp_path, monkeypatch):
    """The worker's kill ends the jailed process (its parent's death), not what it forked: the
    sweep by uid does."""
    import signal
    import time

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            jail._unshare = lambda flags: -1
            jail.enter(str(scratch))
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
            os.write(write, str(os.getuid()).encode())
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(write)
    uid = int(os.read(read, 64))
    os.close(read)
    assert len(_listed(uid)) == 2  # the jailed process and its child
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    monkeypatch.setattr(jail, "probe", lambda: ["no pid namespace"])
    jail.sweep(pid)
    assert not _processes_of(uid)


@pytest.mark.skipif(os.geteuid() != 0, reason="made a non-root user from root")
def test_a_non_root_user_gets_the_jail_through_a_user_namespace():
    """Started as another user (65534 here), the jail is a user namespace of its own: the same
    tmpfs quota and process cap, the count its own."""
    import shutil
    import tempfile

    base = tempfile.mkdtemp()
    os.chmod(base, 0o755)  # the user must reach its scratch folder
    scratch = os.path.join(base, "scratch")
    os.mkdir(scratch)
    os.chown(scratch, 65534, 65534)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            jail._libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE, as a program the user started is
            j = jail.enter(scratch)
            seen = {"tmpfs": j.tmpfs, "pid_namespace": j.pid_namespace, "tasks": j.tasks, "missing": j.missing}
            written = 0
            try:
                with open(os.path.join(scratch, "big"), "wb") as f:
                    for _ in range(40):  # 320 MiB
                        f.write(b"x" * (8 << 20))
                        f.flush()
                        written += 8 << 20
            except OSError as exc:
                seen["write"] = [written >> 20, exc.errno]
            forks = 0
            try:
                for _ in range(200):
                    if os.fork() == 0:
                        import time

                        time.sleep(30)
                        os._exit(0)
                    forks += 1
            except OSError as exc:
                seen["fork"] = [forks, exc.errno]
            os.write(write, json.dumps(seen).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    got = json.loads(os.read(read, 1 << 16) or b"{}")
    os.close(read)
    left = os.listdir(scratch)
    shutil.rmtree(base)
    if got.get("missing"):
        pytest.skip("user namespaces are not allowed here: " + "; ".join(got["missing"]))
    assert got["tmpfs"] and got["pid_namespace"] and got["tasks"] == jail.TASKS
    assert got["write"] == [jail.SCRATCH_BYTES >> 20, errno.ENOSPC]
    assert got["fork"][1] == errno.EAGAIN and got["fork"][0] < jail.TASKS
    assert left == []
