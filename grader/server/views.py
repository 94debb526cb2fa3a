"""What leaves the server for a candidate: their workspaces' starting files, and of each graded upload
what the interviewer chose to show (assignment.show):

- "verdict": pass, fail or error, nothing more;
- "public" (the default): the verdict; the public tests' result with its failing case (the candidate
  has those cases); the hidden tests' verdict and count only; sanitizer findings by kind and line;
  the memory or performance line;
- "full": also the hidden tests' failure headline (it names the hidden case).

Never: the secret seed, the reference solution (a private kata's solution folder), the hidden cases'
list, server paths. As a last guard
every candidate response is checked for the seed's digits before it is sent (app.py).
"""
from __future__ import annotations

import json
import re
import tempfile
from functools import lru_cache
from pathlib import Path

from grader.server.models import Assignment, Submission

_SEED_FLAG = re.compile(r"\s--seed\s+-?\d+")


def workspace_files(kata: str, language: str) -> dict[str, str]:
    """The files `kata start KATA --lang LANGUAGE` writes (the stub, launch.py, statement.md), minus
    the .kata marker, which the client writes itself."""
    from grader import catalog

    # keyed by the kata's folder too: a private kata removed and added again is another folder
    return _workspace_files(kata, language, str(catalog.load(kata).folder))


@lru_cache(maxsize=64)
def _workspace_files(kata: str, language: str, _folder: str) -> dict[str, str]:
    from grader.grading import workspace

    with tempfile.TemporaryDirectory(prefix="kata-stub-") as folder:
        made, written = workspace.start(kata, Path(folder) / kata, lang=language)
        return {name: (made / name).read_text() for name in written if not name.startswith(".")}


def upload_names(files: dict[str, str]) -> set[str]:
    """The files a candidate may upload for a workspace: its source files (statement.md is ours)."""
    return {name for name in files if name.endswith((".cu", ".py"))}


def _rerun(command: str, kata: str) -> str:
    """The public failure's rerun, as the candidate types it in their workspace."""
    command = _SEED_FLAG.sub("", command)
    return re.sub(rf"^kata grade {re.escape(kata)}\b", "kata grade", command).strip()


def result_for(outcome: dict | None, show: str) -> dict | None:
    if not outcome:
        return None
    verdict = outcome.get("verdict", "error")
    if show == "verdict":
        return {"verdict": verdict}
    public, hidden = outcome.get("public") or {}, outcome.get("hidden") or {}
    shown = {
        "verdict": verdict,
        "public": {"verdict": public.get("verdict"), "cases": public.get("cases", 0),
                   "headline": public.get("headline", ""),
                   "mismatches": list(public.get("mismatches", ()))[:5],
                   "rerun": _rerun(public.get("rerun", ""), outcome.get("kata", ""))},
        "hidden": {"verdict": hidden.get("verdict"), "cases": hidden.get("cases", 0)},
        "findings": [{"kind": f.get("kind"), "where": f.get("where")} for f in outcome.get("findings", ())],
        "memory": outcome.get("memory", ""),
        "performance": outcome.get("performance", ""),
    }
    if show == "full":
        shown["hidden"]["headline"] = hidden.get("headline", "")
        shown["problem"] = outcome.get("problem", "")
    return shown


def submission_view(sub: Submission, assignment: Assignment) -> dict:
    return {"id": sub.id, "seq": sub.seq, "kata": sub.kata, "state": sub.state,
            "received_at": sub.received_at, "finished_at": sub.finished_at,
            "result": result_for(sub.outcome, assignment.show) if sub.state in ("done", "error") else None}


def leaks(body: bytes, assignment: Assignment, secret_texts: tuple[str, ...] = ()) -> bool:
    """The secret seed's digits, or one of the texts named (a private kata's solution files, as JSON
    writes them), appear in a response meant for a candidate."""
    if str(assignment.secret_seed).encode() in body:
        return True
    return any(json.dumps(text)[1:-1].encode() in body for text in secret_texts)
