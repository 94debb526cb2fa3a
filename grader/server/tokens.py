"""Secrets at rest: invite tokens are stored as their SHA-256 (a token is 32 random bytes, so a
fast hash suffices: nothing to brute-force), and report links are signed with a key kept in the
database, so a link works on every server process that shares it and expires on its own.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time

from sqlalchemy.orm import Session

from grader.server.models import ServerKey

TOKEN_PREFIX = "kata_"


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_id() -> str:
    return secrets.token_hex(4)


def link_key(session: Session) -> bytes:
    """The report-link signing key, made on first use."""
    row = session.get(ServerKey, "report-links")
    if row is None:
        row = ServerKey(name="report-links", value=secrets.token_hex(32))
        session.add(row)
        session.flush()
    return bytes.fromhex(row.value)


def sign(key: bytes, candidate_id: str, expires: int) -> str:
    return hmac.new(key, f"{candidate_id}:{expires}".encode(), hashlib.sha256).hexdigest()


def check_signature(key: bytes, candidate_id: str, expires: int, signature: str,
                    now: float | None = None) -> bool:
    if expires < (now or time.time()):
        return False
    return hmac.compare_digest(sign(key, candidate_id, expires), signature)
