"""Where a store keeps a memory once: the id a dedupe key gives, the memory holding a key, the
live memories holding a text, and what a second write with a key makes of its memory."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import replace

from core.model import Memory, Scope, Status
from core.records import fetch_memory
from core.validation import content_hash


def dedupe_memory_id(
    scope: Scope, workspace_id: str | None, session_id: str | None, key: str
) -> str:
    """The deterministic id of the memory a dedupe key names in one scope and workspace."""
    basis = "\x00".join(("dedupe", scope.value, workspace_id or "", session_id or "", key))
    return "m_" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:28]


def same_fields(a: Memory, b: Memory) -> bool:
    """Whether `a` and `b` agree on every field a write, an update or a state change sets (a
    change that leaves them all as they are changes nothing)."""
    keys = (
        "content",
        "summary",
        "kind",
        "scope",
        "workspace_id",
        "session_id",
        "tags",
        "keywords",
        "importance",
        "pinned",
        "status",
        "expires_at",
        "superseded_by",
        "source",
    )
    return all(getattr(a, k) == getattr(b, k) for k in keys)


def dedupe_target(conn: sqlite3.Connection, prepared: Memory, now: int) -> Memory | None:
    """The memory holding `prepared`'s dedupe key in its scope, workspace and session - found by
    the key (the unique index), not by the id the key first gave: a memory merged in from
    another workspace keeps its id."""
    holder = dedupe_holder(conn, prepared)
    return fetch_memory(conn, holder, now) if holder else None


def dedupe_holder(conn: sqlite3.Connection, memory: Memory) -> str | None:
    """The id of the memory holding `memory`'s dedupe key in its scope, workspace and session
    (one at most: the unique index), if any."""
    assert memory.dedupe_key is not None
    row = conn.execute(
        "SELECT id FROM memory WHERE scope = ? AND coalesce(workspace_id, '') = ? "
        "AND coalesce(session_id, '') = ? AND dedupe_key = ?",
        (memory.scope.value, memory.workspace_id or "", memory.session_id or "", memory.dedupe_key),
    ).fetchone()
    return str(row[0]) if row else None


def text_key(memory: Memory) -> tuple[str, str, str, str]:
    """Where a store keeps one text once: its hash, scope, workspace and session."""
    return (
        content_hash(memory.content),
        memory.scope.value,
        memory.workspace_id or "",
        memory.session_id or "",
    )


def live_with_text(conn: sqlite3.Connection, key: tuple[str, str, str, str], now: int) -> list[str]:
    """The live (active or archived, unexpired) memories holding a text where `key` (see
    `text_key`) says, oldest first."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM memory WHERE content_hash = ? AND scope = ? "
            "AND coalesce(workspace_id, '') = ? AND coalesce(session_id, '') = ? "
            "AND status IN ('active', 'archived') AND (expires_at IS NULL OR expires_at > ?) "
            "ORDER BY seq",
            (*key, now),
        )
    ]


def live_copy(conn: sqlite3.Connection, memory: Memory, going: set[str], now: int) -> str | None:
    """Another live memory with `memory`'s very text in its scope, workspace and session, not
    among `going`; the oldest if several."""
    same = live_with_text(conn, text_key(memory), now)
    return next((mid for mid in same if mid != memory.id and mid not in going), None)


def upserted(existing: Memory, prepared: Memory, *, by_agent: bool = False) -> Memory | None:
    """What a second write with `existing`'s dedupe key makes of it (before its revision and
    stamps move on); None when it changes nothing. An archived memory comes back to active,
    unless the write is an agent's (`by_agent`): a person archived it, and only a person
    restores it - the agent's revision lands, archived."""
    restore = existing.status is Status.ARCHIVED and not by_agent
    candidate = replace(
        existing,
        content=prepared.content,
        summary=prepared.summary,
        kind=prepared.kind,
        tags=prepared.tags,
        keywords=prepared.keywords,
        importance=prepared.importance,
        pinned=existing.pinned or prepared.pinned,
        status=Status.ACTIVE if restore else existing.status,
        expires_at=prepared.expires_at,
        source=prepared.source or existing.source,
    )
    return None if same_fields(candidate, existing) else candidate
