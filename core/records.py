"""Rows of the memory and revision tables, read and written with plain parameterised SQL.

These are the hot paths (every write, get, list and search), so they speak to the sqlite3
connection directly instead of through the ORM; the column lists below are the one place the
row layout is spelled out for them.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from core.database import in_lists
from core.model import Memory, Origin, Revision, Scope, Status, Tier

MEMORY_COLUMNS: tuple[str, ...] = (
    "id",
    "seq",
    "revision",
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
    "tier",
    "agent",
    "source",
    "origin",
    "created_at",
    "updated_at",
    "expires_at",
    "dedupe_key",
    "content_hash",
    "superseded_by",
    "flags",
)

REVISION_COLUMNS: tuple[str, ...] = (
    "memory_id",
    "revision",
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
    "tier",
    "expires_at",
    "actor",
    "action",
    "reason",
    "created_at",
)

SELECT_MEMORY = (
    "SELECT "
    + ", ".join(f"m.{c}" for c in MEMORY_COLUMNS)
    + ", u.use_count, u.last_recalled_at FROM memory m LEFT JOIN usage u ON u.memory_id = m.id"
)
_INSERT_MEMORY = (
    f"INSERT INTO memory ({', '.join(MEMORY_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in MEMORY_COLUMNS)})"
)
_INSERT_REVISION = (
    f"INSERT INTO revision ({', '.join(REVISION_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in REVISION_COLUMNS)})"
)
SELECT_REVISION = "SELECT " + ", ".join(f"r.{c}" for c in REVISION_COLUMNS) + " FROM revision r"


def memory_from_row(row: Sequence[Any], now_ms: int) -> Memory:
    """Build a Memory from a SELECT_MEMORY row."""
    r = dict(zip(MEMORY_COLUMNS, row, strict=False))
    use_count, last_recalled = row[len(MEMORY_COLUMNS)], row[len(MEMORY_COLUMNS) + 1]
    expires_at = r["expires_at"]
    return Memory(
        id=r["id"],
        revision=int(r["revision"]),
        content=r["content"],
        summary=r["summary"],
        kind=r["kind"],
        scope=Scope(r["scope"]),
        workspace_id=r["workspace_id"],
        session_id=r["session_id"],
        tags=tuple(json.loads(r["tags"] or "[]")),
        keywords=r["keywords"],
        importance=int(r["importance"]),
        pinned=bool(r["pinned"]),
        status=Status(r["status"]),
        tier=Tier(r["tier"]),
        agent=r["agent"],
        source=r["source"],
        origin=Origin(r["origin"]) if r["origin"] else None,
        created_at=int(r["created_at"]),
        updated_at=int(r["updated_at"]),
        expires_at=int(expires_at) if expires_at is not None else None,
        dedupe_key=r["dedupe_key"],
        superseded_by=r["superseded_by"],
        use_count=int(use_count or 0),
        last_recalled_at=int(last_recalled) if last_recalled is not None else None,
        flags=tuple(json.loads(r["flags"] or "[]")),
        expired=expires_at is not None and int(expires_at) <= now_ms,
        seq=int(r["seq"]),
    )


def revision_from_row(row: Sequence[Any]) -> Revision:
    r = dict(zip(REVISION_COLUMNS, row, strict=True))
    return Revision(
        memory_id=r["memory_id"],
        revision=int(r["revision"]),
        content=r["content"],
        summary=r["summary"],
        kind=r["kind"],
        scope=Scope(r["scope"]),
        workspace_id=r["workspace_id"],
        session_id=r["session_id"],
        tags=tuple(json.loads(r["tags"] or "[]")),
        keywords=r["keywords"],
        importance=int(r["importance"]),
        pinned=bool(r["pinned"]),
        status=Status(r["status"]),
        tier=Tier(r["tier"]),
        expires_at=r["expires_at"],
        actor=r["actor"],
        action=r["action"],
        reason=r["reason"],
        created_at=int(r["created_at"]),
    )


@functools.lru_cache(maxsize=1024)
def _json_list(items: tuple[str, ...]) -> str:
    # Cached: a store's memories share a few tag lists, and each is written twice per write.
    return json.dumps(list(items), ensure_ascii=False) if items else "[]"


def memory_values(m: Memory, *, seq: int, content_hash: str | None) -> tuple[Any, ...]:
    """The row for `m`, in MEMORY_COLUMNS order."""
    return (
        m.id,
        seq,
        m.revision,
        m.content,
        m.summary,
        m.kind,
        m.scope.value,
        m.workspace_id,
        m.session_id,
        _json_list(m.tags),
        m.keywords,
        m.importance,
        1 if m.pinned else 0,
        m.status.value,
        m.tier.value,
        m.agent,
        m.source,
        m.origin.value if m.origin else None,
        m.created_at,
        m.updated_at,
        m.expires_at,
        m.dedupe_key,
        content_hash,
        m.superseded_by,
        _json_list(m.flags),
    )


def _revision_fields(x: Memory | Revision) -> tuple[Any, ...]:
    """The fields a memory and its revisions share, in REVISION_COLUMNS order (`revision` to
    `expires_at`)."""
    return (
        x.revision,
        x.content,
        x.summary,
        x.kind,
        x.scope.value,
        x.workspace_id,
        x.session_id,
        _json_list(x.tags),
        x.keywords,
        x.importance,
        1 if x.pinned else 0,
        x.status.value,
        x.tier.value,
        x.expires_at,
    )


def revision_values(
    m: Memory, *, actor: str, action: str, reason: str | None, at: int
) -> tuple[Any, ...]:
    """The revision row of `m` as it stands, in REVISION_COLUMNS order."""
    return (m.id, *_revision_fields(m), actor, action, reason, at)


def revision_row(r: Revision) -> tuple[Any, ...]:
    """A revision as its row, in REVISION_COLUMNS order (what `revision_from_row` reads)."""
    return (r.memory_id, *_revision_fields(r), r.actor, r.action, r.reason, r.created_at)


def insert_memory(
    conn: sqlite3.Connection, m: Memory, *, seq: int, content_hash: str | None
) -> None:
    conn.execute(_INSERT_MEMORY, memory_values(m, seq=seq, content_hash=content_hash))


def insert_memories(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    conn.executemany(_INSERT_MEMORY, rows)


def replace_memory(conn: sqlite3.Connection, m: Memory, *, content_hash: str | None) -> None:
    """Overwrite the current-state row of an existing memory (its seq is kept)."""
    cols = [c for c in MEMORY_COLUMNS if c not in ("id", "seq")]
    values = dict(
        zip(MEMORY_COLUMNS, memory_values(m, seq=0, content_hash=content_hash), strict=True)
    )
    conn.execute(
        f"UPDATE memory SET {', '.join(f'{c} = ?' for c in cols)} WHERE id = ?",
        [values[c] for c in cols] + [m.id],
    )


def insert_revision(
    conn: sqlite3.Connection, m: Memory, *, actor: str, action: str, reason: str | None, at: int
) -> None:
    conn.execute(
        _INSERT_REVISION, revision_values(m, actor=actor, action=action, reason=reason, at=at)
    )


def insert_revisions(conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
    conn.executemany(_INSERT_REVISION, rows)


def fetch_memory(conn: sqlite3.Connection, memory_id: str, now_ms: int) -> Memory | None:
    row = conn.execute(SELECT_MEMORY + " WHERE m.id = ?", (memory_id,)).fetchone()
    return memory_from_row(row, now_ms) if row else None


def fetch_memories(conn: sqlite3.Connection, ids: Sequence[str], now_ms: int) -> dict[str, Memory]:
    """The memories of `ids` that exist, by id."""
    out: dict[str, Memory] = {}
    for chunk, marks in in_lists(ids):
        for row in conn.execute(SELECT_MEMORY + f" WHERE m.id IN ({marks})", chunk):
            mem = memory_from_row(row, now_ms)
            out[mem.id] = mem
    return out


def fetch_revisions(conn: sqlite3.Connection, memory_id: str) -> list[Revision]:
    rows = conn.execute(
        SELECT_REVISION + " WHERE r.memory_id = ? ORDER BY r.revision", (memory_id,)
    ).fetchall()
    return [revision_from_row(r) for r in rows]


def next_memory_seq(conn: sqlite3.Connection, count: int = 1) -> int:
    """Reserve `count` creation sequence numbers; returns the first. Never reused."""
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + ? WHERE key = 'memory_seq' "
        "RETURNING CAST(value AS INTEGER)",
        (count,),
    ).fetchone()
    return int(row[0]) - count + 1
