"""Idempotency keys: the answer a retried write gets again, and what its key is checked against."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Iterator
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
    if first_hash != request_hash(req, caller) and first_hash not in _as_sent_before(req, caller):
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


# Line breaks as a request could spell them before 2026-11-30, when its text was kept (and hashed)
# as sent; since then it is read with line feeds, so the retry of such a write hashes otherwise.
_OLD_BREAKS = ("\r\n", "\r", "\x85")


def _as_sent_before(req: WriteRequest, caller: Caller) -> Iterator[str]:
    """The hashes `req` had when sent before 2026-11-30 with its line breaks spelt one of the old
    ways throughout (CRLF, a lone CR, NEL): a retry across the upgrade of such a write is the same
    write, and gets its first answer rather than `idempotency_mismatch`. A request that holds no
    line feed has no other spelling. Tags are left as they are: they are read as sent, then and
    now."""
    texts = ("content", "summary", "keywords", "dedupe_key", "source")
    if not any("\n" in (getattr(req, f) or "") for f in texts):
        return
    for brk in _OLD_BREAKS:
        changes: dict[str, Any] = {
            f: getattr(req, f).replace("\n", brk) for f in texts if getattr(req, f)
        }
        yield request_hash(dataclasses.replace(req, **changes), caller)
