"""The audit ledger: one appended event per mutation, and the change feed read from it.

Events name who (actor kind and name), what (action), which memory and revision, and when, under a
monotonic sequence number. They never carry query text; a short content preview is kept for the
human and scrubbed when the memory is forgotten. Which actions reach agents, count as writes and
touch which topics is `core.audit_actions`; moving the oldest events into files past
`audit.max_events` is `core.audit_rotation`, and those files are `core.audit_files`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.audit_actions import refuse_wrong_clock, topics_for
from core.changes import Change
from core.model import Caller, Memory, Scope, Tier
from core.wording import cut
from core.writer import WriteTx

PREVIEW_CHARS = 80


def preview(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return cut(flat, PREVIEW_CHARS)


def record(
    tx: WriteTx,
    caller: Caller,
    action: str,
    *,
    memory_id: str | None = None,
    revision: int | None = None,
    content_preview: str | None = None,
    workspace_id: str | None = None,
    memory: Memory | None = None,
    detail: dict[str, Any] | None = None,
    at: int,
) -> Change:
    """Append one audit event inside the current write transaction and queue its Change.
    `memory`, when given, supplies the id, revision, workspace, scope and session.

    Raises:
        ClockWrong: a write an agent or a person asked for, stamped `at` a time before the
            clock can be trusted (`refuse_wrong_clock`); the transaction rolls back.
    """
    refuse_wrong_clock(caller, action, at)
    if memory is not None:
        memory_id = memory_id or memory.id
        revision = revision if revision is not None else memory.revision
        workspace_id = workspace_id or memory.workspace_id
        scope: str | None = memory.scope.value
        session_id = memory.session_id
    elif memory_id is not None:
        # Where the memory lives now - what `changes.since` reports for this event, so the push
        # and the catch-up agree (until 2026-11-30 an `adopt` or `resolve` was pushed with no
        # scope and reached agents through `changes.since` only).
        found = tx.conn.execute(
            "SELECT workspace_id, scope, session_id FROM memory WHERE id = ? UNION ALL "
            "SELECT workspace_id, scope, session_id FROM tombstone WHERE memory_id = ? LIMIT 1",
            (memory_id, memory_id),
        ).fetchone()
        if found is not None:
            workspace_id = workspace_id or found[0]
            scope, session_id = found[1], found[2]
        else:
            scope = session_id = None
    else:
        scope = session_id = None
    cur = tx.conn.execute(
        "INSERT INTO audit (at, actor_kind, actor, verified, action, memory_id, revision, preview,"
        " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            at,
            caller.surface.value,
            caller.actor,
            1 if caller.verified else 0,
            action,
            memory_id,
            revision,
            preview(content_preview),
            json.dumps(detail or {}, ensure_ascii=False, sort_keys=True),
        ),
    )
    seq = int(cur.lastrowid or 0)
    change = Change(
        seq=seq,
        action=action,
        topics=topics_for(action),
        memory_id=memory_id,
        revision=revision,
        workspace_id=workspace_id,
        actor=caller.actor,
        scope=scope,
        session_id=session_id,
    )
    tx.changes.append(change)
    return change


def record_many(
    tx: WriteTx,
    caller: Caller,
    action: str,
    memories: Sequence[Memory],
    *,
    at: int,
) -> None:
    """Append one audit event per memory with a single statement (the bulk-write path).

    Raises:
        ClockWrong: as `record`.
    """
    if not memories:
        return
    refuse_wrong_clock(caller, action, at)
    verified = 1 if caller.verified else 0
    actor_kind, actor = caller.surface.value, caller.actor
    details: dict[tuple[str, Scope, Tier], str] = {}  # a batch repeats a few kind/scope/tier
    rows = []
    for m in memories:
        key = (m.kind, m.scope, m.tier)
        detail = details.get(key)
        if detail is None:
            detail = details[key] = json.dumps(
                {"kind": m.kind, "scope": m.scope.value, "tier": m.tier.value}, sort_keys=True
            )
        rows.append(
            (at, actor_kind, actor, verified, action, m.id, m.revision, preview(m.content), detail)
        )
    tx.conn.executemany(
        "INSERT INTO audit (at, actor_kind, actor, verified, action, memory_id, revision, preview,"
        " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    # The single writer makes the sequence numbers of these rows consecutive.
    last = int(tx.conn.execute("SELECT last_insert_rowid()").fetchone()[0])
    first = last - len(memories) + 1
    frozen = topics_for(action)
    tx.changes.extend(
        Change(
            seq=first + i,
            action=action,
            topics=frozen,
            memory_id=m.id,
            revision=m.revision,
            workspace_id=m.workspace_id,
            actor=actor,
            scope=m.scope.value,
            session_id=m.session_id,
        )
        for i, m in enumerate(memories)
    )


@dataclass(frozen=True)
class AuditEvent:
    seq: int
    at: int
    actor_kind: str
    actor: str
    verified: bool
    action: str
    memory_id: str | None
    revision: int | None
    preview: str | None
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "actor_kind": self.actor_kind,
            "actor": self.actor,
            "verified": self.verified,
            "action": self.action,
            "memory_id": self.memory_id,
            "revision": self.revision,
            "preview": self.preview,
            "detail": self.detail,
        }


AUDIT_COLUMNS: tuple[str, ...] = (
    "seq",
    "at",
    "actor_kind",
    "actor",
    "verified",
    "action",
    "memory_id",
    "revision",
    "preview",
    "detail",
)


def event_from_values(values: Sequence[Any]) -> AuditEvent:
    """Build an AuditEvent from a row's values in AUDIT_COLUMNS order."""
    seq, at, actor_kind, actor, verified, action, memory_id, revision, text, detail = values
    return AuditEvent(
        seq=int(seq),
        at=int(at),
        actor_kind=actor_kind,
        actor=actor,
        verified=bool(verified),
        action=action,
        memory_id=memory_id,
        revision=revision,
        preview=text,
        detail=json.loads(detail or "{}"),
    )


def event_from_row(row: Any) -> AuditEvent:
    """Build an AuditEvent from a row of the audit table's model."""
    return event_from_values([getattr(row, c) for c in AUDIT_COLUMNS])


def scrub_previews(tx: WriteTx, memory_id: str) -> None:
    """Remove every content preview of one memory (part of `forget` and `purge`)."""
    tables = tx.tables
    tables.Audit.update(preview=None).where(tables.Audit.memory_id == memory_id).execute()


def table_start(conn: sqlite3.Connection) -> int:
    """The first seq of the audit table; for an empty table, the seq its next event gets."""
    first = conn.execute("SELECT min(seq) FROM audit").fetchone()[0]
    if first is not None:
        return int(first)
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").fetchone()
    return int(row[0]) + 1 if row else 1


def newest_at(conn: sqlite3.Connection) -> int | None:
    """The time of the newest event (the last written), if any."""
    row = conn.execute("SELECT at FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    return int(row[0]) if row else None
