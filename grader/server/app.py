"""The HTTP service (FastAPI). Candidates hold a bearer invite token; the interviewer's HTML reports
are behind signed, expiring links (assignments.report_link). Every request is validated and every
error is a JSON body {"error", "hint"} with a 4xx status, never a traceback; an upload is committed
to the database before the answer leaves, and grading happens elsewhere (pool.py).

HTTPS is a reverse proxy's job (docs/server.md); the server binds to loopback unless told otherwise.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, Field
from sqlalchemy import select

from grader.server import jobs, private_katas, tokens, views
from grader.server.database import Database
from grader.server.models import Assignment, AuditEvent, Candidate, Submission

log = logging.getLogger("kata.serve")
API = "/api/v1"


@dataclass(frozen=True)
class Limits:
    requests_per_minute: int = 240  # per token, every endpoint (a client polls a grade once a second)
    uploads_per_minute: int = 12  # per token
    file_bytes: int = 64 * 1024  # one uploaded file
    body_bytes: int = 512 * 1024  # one request


class ApiError(Exception):
    def __init__(self, status: int, message: str, hint: str = "", headers: dict | None = None):
        super().__init__(message)
        self.status, self.message, self.hint, self.headers = status, message, hint, headers or {}


class JoinBody(BaseModel):
    language: str | None = Field(default=None, max_length=16)


class SubmitBody(BaseModel):
    kata: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")
    files: dict[str, str] = Field(max_length=8)


class RateLimiter:
    """A sliding one-minute window per (token, kind), in memory: a restart forgets it, which costs
    a burst at most."""

    def __init__(self):
        self.seen: dict[tuple[str, str], deque] = {}
        self.lock = threading.Lock()

    def check(self, key: str, kind: str, limit: int, now: float) -> None:
        with self.lock:
            window = self.seen.setdefault((key, kind), deque())
            while window and window[0] <= now - 60:
                window.popleft()
            if len(window) >= limit:
                wait = int(window[0] + 60 - now) + 1
                raise ApiError(429, f"too many {kind} with this token ({limit} a minute)",
                               f"wait {wait} s", {"Retry-After": str(wait)})
            window.append(now)


def create_app(db: Database, limits: Limits = Limits(), pool=None) -> FastAPI:
    @asynccontextmanager
    async def lifespan(_app):
        private_katas.register_all(db)
        if pool is not None:
            pool.start()
        yield
        if pool is not None:
            pool.close()

    app = FastAPI(title="kata serve", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    limiter = RateLimiter()

    @app.exception_handler(ApiError)
    async def _api_error(_request, exc: ApiError):
        return JSONResponse({"error": exc.message, "hint": exc.hint}, exc.status, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()[:5])
        return JSONResponse({"error": f"invalid request: {problems}",
                             "hint": "kata interview submit sends well-formed requests"}, 422)

    @app.exception_handler(Exception)
    async def _bug(_request, exc: Exception):
        log.exception("unhandled error", exc_info=exc)
        return JSONResponse({"error": "internal error in the kata server",
                             "hint": "the server's log has the details; tell the interviewer"}, 500)

    @app.middleware("http")
    async def _body_limit(request: Request, call_next):
        if request.method in ("POST", "PUT", "PATCH"):
            length = request.headers.get("content-length")
            if length is None or not length.isdigit():
                return JSONResponse({"error": "a request body needs a Content-Length", "hint": ""}, 411)
            if int(length) > limits.body_bytes:
                return JSONResponse({"error": f"request of {int(length):,} bytes; the limit is "
                                              f"{limits.body_bytes:,}", "hint": ""}, 413)
        return await call_next(request)

    def candidate(request: Request) -> Candidate:
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.startswith(tokens.TOKEN_PREFIX) or len(token) > 100:
            raise ApiError(401, "no invite token (Authorization: Bearer kata_...)",
                           "join with `kata interview join URL TOKEN`")
        hashed = tokens.token_hash(token.strip())
        with db.session() as s:
            found = s.scalar(select(Candidate).where(Candidate.token_hash == hashed))
        if found is None:
            raise ApiError(401, "unknown invite token", "check the token the interviewer sent")
        limiter.check(hashed, "requests", limits.requests_per_minute, time.time())
        return found

    def reply(data: dict, assignment: Assignment, status: int = 200, secret: tuple[str, ...] = ()) -> Response:
        body = json.dumps(data).encode()
        if views.leaks(body, assignment, secret):  # a bug of ours would otherwise hand out a secret
            log.error("refused to send a response containing the secret seed or a solution: %s", data)
            raise ApiError(500, "internal error in the kata server", "tell the interviewer")
        return Response(body, status, media_type="application/json")

    def remote(request: Request) -> str:
        return request.client.host if request.client else ""

    @app.get(f"{API}/health")
    def health():
        return {"ok": True, "server_time": time.time()}

    @app.post(f"{API}/join")
    def join(body: JoinBody, request: Request, who: Candidate = Depends(candidate)):
        now = time.time()
        with db.session() as s, s.begin():
            c = s.get(Candidate, who.id)
            a = s.get(Assignment, c.assignment_id)
            language = body.language or c.language or a.languages[0]
            if language not in a.languages:
                raise ApiError(422, f"this assignment is in {', '.join(a.languages)}, not {language}",
                               f"join with --lang {a.languages[0]}")
            if c.joined_at is None:
                if a.due_at is not None and now >= a.due_at:
                    raise ApiError(403, "this assignment closed before you joined", "ask the interviewer")
                c.joined_at, c.language = now, language
                c.deadline = now + a.minutes * 60 if a.due_at is None else min(a.due_at, now + a.minutes * 60)
                s.add(AuditEvent(time=now, kind="joined", candidate_id=c.id, remote=remote(request),
                                 detail=language))
            katas, secret = [], ()
            for kata in a.katas:
                private = private_katas.candidate_copy(s, kata)  # loadable here before its workspace is made
                files = views.workspace_files(kata, c.language)
                entry = {"kata": kata, "files": files, "uploads": sorted(views.upload_names(files))}
                if private is not None:  # the candidate's kata has no copy of it: its public part
                    entry["source"], solution = private
                    secret += solution
                katas.append(entry)
            data = {"candidate": c.name, "assignment": a.name, "language": c.language, "katas": katas,
                    "deadline": c.deadline, "server_time": now, "minutes": a.minutes, "show": a.show}
        return reply(data, a, secret=secret)

    @app.get(f"{API}/status")
    def status(who: Candidate = Depends(candidate)):
        with db.session() as s:
            a = s.get(Assignment, who.assignment_id)
            subs = s.scalars(select(Submission).where(Submission.candidate_id == who.id).order_by(Submission.seq))
            data = {"deadline": who.deadline, "server_time": time.time(), "katas": a.katas,
                    "submissions": [views.submission_view(sub, a) for sub in subs]}
        return reply(data, a)

    @app.post(f"{API}/submissions", status_code=202)
    def submit(body: SubmitBody, request: Request, who: Candidate = Depends(candidate)):
        now = time.time()
        limiter.check(who.token_hash, "uploads", limits.uploads_per_minute, now)
        private_katas.register(db, body.kata)  # one added after this process started (its own transaction)
        with db.session() as s, s.begin():
            a = s.get(Assignment, who.assignment_id)
            if who.joined_at is None:
                raise ApiError(409, "join before you submit", "kata interview join URL TOKEN")
            if body.kata not in a.katas:
                raise ApiError(422, f"{body.kata} is not part of this assignment ({', '.join(a.katas)})")
            allowed = views.upload_names(views.workspace_files(body.kata, who.language))
            stray = sorted(set(body.files) - allowed)
            if stray or not body.files:
                raise ApiError(422, f"{body.kata} takes only {', '.join(sorted(allowed))}"
                               + (f"; not {', '.join(stray)}" if stray else ""))
            big = [n for n, text in body.files.items() if len(text.encode()) > limits.file_bytes]
            if big:
                raise ApiError(413, f"{', '.join(big)} is over {limits.file_bytes // 1024} KiB")
            if now >= who.deadline:
                s.add(AuditEvent(time=now, kind="late-upload", candidate_id=who.id, remote=remote(request),
                                 detail=f"{body.kata} {now - who.deadline:.1f}s late "
                                        f"sha256={jobs.sources_hash(body.files)}"))
                late = ApiError(403, f"the deadline passed {now - who.deadline:.0f} s ago (server clock); "
                                "this upload was recorded but will not be graded",
                                "your last upload before the deadline is the one graded")
            else:
                late = None
                sub = jobs.enqueue(s, who.id, body.kata, body.files, now)
                s.add(AuditEvent(time=now, kind="upload", candidate_id=who.id, submission_id=sub.id,
                                 remote=remote(request),
                                 detail=f"{body.kata} #{sub.seq} sha256={sub.sources_hash}"))
                view = views.submission_view(sub, a)
        if late:  # raised after the commit, so the refusal itself is on record
            raise late
        return reply({"submission": view}, a, 202)

    @app.get(API + "/submissions/{submission_id}")
    def submission(submission_id: int, who: Candidate = Depends(candidate)):
        with db.session() as s:
            sub = s.get(Submission, submission_id)
            if sub is None or sub.candidate_id != who.id:
                raise ApiError(404, f"no submission {submission_id} of yours")
            a = s.get(Assignment, who.assignment_id)
            data = views.submission_view(sub, a)
        return reply(data, a)

    @app.get("/reports/{candidate_id}", response_class=HTMLResponse)
    def report_page(candidate_id: str, expires: int = 0, sig: str = ""):
        from grader.practice.interview_report import render_html
        from grader.server import assignments

        with db.session() as s, s.begin():
            key = tokens.link_key(s)
        if len(candidate_id) > 16 or not tokens.check_signature(key, candidate_id, expires, sig[:64]):
            raise ApiError(403, "this report link is not valid or has expired",
                           "make a new one with `kata serve admin report CANDIDATE`")
        return HTMLResponse(render_html(assignments.report(db, candidate_id)))

    return app
