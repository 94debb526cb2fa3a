"""The candidate's side of a server interview: join (make the workspaces, learn the server's
deadline), grade the public tests locally as in any interview, submit (upload, wait for the server's
grade). The session folder holds `.kata-remote` (the server, the token, the deadline), readable by
its owner only.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from grader.errors import EnvironmentProblem, UsageError

REMOTE = ".kata-remote"
PRIVATE_KATAS = ".katas"  # in the session folder: the public part of the server's private katas
WAIT_S = 1.0  # between polls of a grade in progress


@dataclass(frozen=True)
class RemoteSession:
    folder: Path  # the session folder (one workspace per kata)
    url: str  # the server
    token: str  # this candidate's invite token
    deadline: float  # on the server's clock
    offset: float  # server clock minus this machine's, at the join
    katas: tuple[str, ...]
    uploads: dict  # {kata: [file names the server takes]}

    def left_s(self) -> float:
        return self.deadline - (time.time() + self.offset)


def find(where: Path | None = None) -> RemoteSession | None:
    """The server session whose folder holds `where` (default: here), or None."""
    here = Path(where or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        marker = folder / REMOTE
        if marker.is_file():
            data = json.loads(marker.read_text())
            return RemoteSession(folder, data["url"], data["token"], data["deadline"], data["offset"],
                                 tuple(data["katas"]), data["uploads"])
    return None


class Api:
    """JSON over HTTP with the server's errors turned into KataErrors."""

    def __init__(self, url: str, token: str, timeout: float = 30.0, transport=None):
        import httpx

        self.url = url.rstrip("/")
        self.client = httpx.Client(base_url=self.url + "/api/v1", timeout=timeout, transport=transport,
                                   headers={"Authorization": f"Bearer {token}"})

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        import httpx

        try:
            response = self.client.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise EnvironmentProblem(f"cannot reach the kata server at {self.url}: {exc}",
                                     hint="check the URL and your network, then run the command again") from None
        try:
            data = response.json()
        except ValueError:
            data = {"error": response.text[:200]}
        if response.status_code >= 400:
            raise UsageError(f"the server says: {data.get('error', response.status_code)}",
                             hint=data.get("hint") or None)
        return data

    def close(self) -> None:
        self.client.close()


def join(url: str, token: str, folder: Path | None = None, language: str | None = None,
         transport=None) -> RemoteSession:
    """Make the workspaces the server hands out; the clock starts at the server on the first join."""
    from grader import catalog
    from grader.grading.workspace import MARKER

    api = Api(url, token, transport=transport)
    sent = time.time()
    data = api.call("POST", "/join", {"language": language})
    offset = data["server_time"] - (sent + time.time()) / 2
    api.close()
    folder = Path(folder or "interview").resolve()
    if (folder / REMOTE).is_file():
        pass  # joining again (another shell, a lost terminal): the files there are the candidate's work
    elif folder.exists() and any(folder.iterdir()):
        raise UsageError(f"{folder} already exists and is not empty", hint="pick another folder with --dir")
    uploads = {}
    for kata in data["katas"]:
        workspace = folder / kata["kata"]
        workspace.mkdir(parents=True, exist_ok=True)
        for name, text in kata["files"].items():
            if not (workspace / name).exists():
                (workspace / name).write_text(text)
        extra = f'lang = "{data["language"]}"\n' if data["language"] != "cuda" else ""
        if kata.get("source"):  # a private kata: its public part, so the public tests run here
            _private_copy(folder / PRIVATE_KATAS / kata["kata"], kata["source"])
            extra += f'katas = "../{PRIVATE_KATAS}"\n'  # where the grader finds it (workspace.read_marker)
        (workspace / MARKER).write_text(f'kata = "{kata["kata"]}"\nformat = {catalog.FORMAT}\n{extra}')
        uploads[kata["kata"]] = kata["uploads"]
    marker = folder / REMOTE
    marker.write_text(json.dumps({"url": url, "token": token, "deadline": data["deadline"], "offset": offset,
                                  "katas": [k["kata"] for k in data["katas"]], "uploads": uploads}))
    os.chmod(marker, 0o600)  # the token is the candidate's password
    return find(folder)


def _private_copy(target: Path, files: dict[str, str]) -> None:
    """Write a private kata's public files (afresh: the server's copy is the truth)."""
    import shutil

    from grader.server.private_katas import write_files

    if target.exists():
        shutil.rmtree(target)
    write_files(target, files)


def kata_here(session: RemoteSession, kata: str | None, where: Path | None = None) -> list[str]:
    """The kata named, else the workspace we are in, else all of the session's katas."""
    if kata:
        if kata not in session.katas:
            raise UsageError(f"{kata} is not part of this interview ({', '.join(session.katas)})")
        return [kata]
    here = Path(where or Path.cwd()).resolve()
    for name in session.katas:
        workspace = session.folder / name
        if here == workspace or workspace in here.parents:
            return [name]
    return list(session.katas)


def upload(session: RemoteSession, kata: str, transport=None) -> dict:
    """Send the workspace's source files; the server answers once the upload is in its database."""
    workspace = session.folder / kata
    files = {name: (workspace / name).read_text(errors="replace") for name in session.uploads[kata]
             if (workspace / name).is_file()}
    api = Api(session.url, session.token, transport=transport)
    try:
        return api.call("POST", "/submissions", {"kata": kata, "files": files})["submission"]
    finally:
        api.close()


def wait(session: RemoteSession, submission_id: int, timeout_s: float = 1800.0, transport=None,
         on_wait=None) -> dict:
    """Poll until the server has graded the upload."""
    api = Api(session.url, session.token, transport=transport)
    try:
        end = time.time() + timeout_s
        while True:
            view = api.call("GET", f"/submissions/{submission_id}")
            if view["state"] in ("done", "error"):
                return view
            if time.time() > end:
                raise EnvironmentProblem(f"the server has not graded submission {submission_id} after "
                                         f"{timeout_s:.0f} s (it is {view['state']})",
                                         hint="it is kept; `kata interview status` shows it later")
            if on_wait:
                on_wait(view)
            time.sleep(WAIT_S)
    finally:
        api.close()


def status(session: RemoteSession, transport=None) -> dict:
    api = Api(session.url, session.token, transport=transport)
    try:
        return api.call("GET", "/status")
    finally:
        api.close()


def render(view: dict, console) -> None:
    """One graded upload, as much as the interviewer chose to show."""
    from rich.text import Text

    from grader.practice.interview_report import VERDICT_STYLE

    # styles as Text, never markup: the console prints text as text (grader/terminal.py)
    result = view.get("result") or {}
    verdict = result.get("verdict", view["state"])
    console.print(Text.assemble((view["kata"], "bold"), f" upload #{view['seq']}: ",
                                (verdict, VERDICT_STYLE.get(verdict, "bold"))))
    for suite in ("public", "hidden"):
        part = result.get(suite)
        if not part:
            continue
        console.print(f"  {suite}: {part.get('verdict')} ({part.get('cases', 0)} cases)")
        if part.get("headline") and part.get("verdict") != "pass":
            console.print(f"    {part['headline']}", markup=False)
            for line in part.get("mismatches", ()):
                console.print(f"      {line}", markup=False)
            if part.get("rerun"):
                console.print(f"    rerun: {part['rerun']}", markup=False)
    for finding in result.get("findings", ()):
        console.print(Text.assemble("  ", (finding["kind"], "red"), f" {finding['where']}"))
    if result.get("problem"):
        console.print(f"  {result['problem']}", markup=False)
    line = result.get("performance") or result.get("memory")
    if line:
        console.print(f"  {line}", markup=False)
