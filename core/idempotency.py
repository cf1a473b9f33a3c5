"""Idempotency keys: the answer a retried write gets again, and what its key is checked against."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from core.errors import IdempotencyMismatch
from core.model import Caller, Scope, WriteResult, WriteStatus
from core.requests import WriteRequest


def replayed(conn: sqlite3.Connection, caller: Caller, req: WriteRequest) -> WriteResult | None:
    """The answer a write with this idempotency key already got (marked `replayed`), or None
    when the key is new (or the request has none).

    Raises:
        IdempotencyMismatch: the key was used for a different write.
    """
    if req.idempotency_key is None:
        return None
    row = conn.execute(
        "SELECT request_hash, response FROM idempotency WHERE actor = ? AND key = ?",
        (caller.actor, req.idempotency_key),
    ).fetchone()
    return replay(req, caller, row[0], json.loads(row[1])) if row is not None else None


def binding_of(caller: Caller, scope: Scope) -> tuple[str | None, str | None]:
    """The workspace and session a write of `scope` by `caller` lands in (None where none)."""
    if scope is Scope.PROJECT:
        return caller.workspace_id, None
    if scope is Scope.SESSION:
        return caller.workspace_id, caller.session_id
    return None, None


def request_hash(req: WriteRequest, caller: Caller) -> str:
    """What an idempotency key is checked against: the hash of the request's fields and, for a
    project or session write, of the workspace and session it lands in - the same key and body
    from a connection bound elsewhere is another write."""
    fingerprint = req.fingerprint()
    binding = binding_of(caller, req.scope)
    if binding != (None, None):
        fingerprint["binding"] = list(binding)
    blob = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def replay(
    req: WriteRequest, caller: Caller, first_hash: str, first: dict[str, Any]
) -> WriteResult:
    """`first` (the answer a write with `req`'s idempotency key got) again, marked `replayed` -
    every part of it, `archived` included (until 2026-11-30 a replay left that out, and a
    keyed write into a memory a person archived was said again as if it had made it current).

    Raises:
        IdempotencyMismatch: that write (hashed `first_hash`) was a different one, or the same
            one from another workspace or session.
    """
    if first_hash != request_hash(req, caller):
        raise IdempotencyMismatch(
            f"idempotency key {req.idempotency_key!r} was already used for a different write "
            "(other content, or from another workspace or session); use a new key",
            data={"idempotency_key": req.idempotency_key},
        )
    return WriteResult(
        WriteStatus(first["status"]),
        id=first.get("id"),
        revision=first.get("revision"),
        suggestion_id=first.get("suggestion_id"),
        reason=first.get("reason"),
        reason_code=first.get("reason_code"),
        duplicate=bool(first.get("duplicate")),
        similar=tuple(first.get("similar", ())),
        replayed=True,
        archived=bool(first.get("archived")),
    )
