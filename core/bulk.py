"""Inserting new memories, one or fifty thousand, with set-based duplicate and tombstone checks.

Every new memory - a single agent write or a bulk import - lands through `insert_new`, so the
rules (exact duplicates are one memory, forgotten content does not return for agents, one
revision and one audit event per memory, observers kept in step) live in one place.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from typing import Protocol

from core import audit, tombstones
from core.model import Caller, Memory, Surface, WriteResult, WriteStatus
from core.records import (
    fetch_memories,
    insert_memories,
    insert_revisions,
    memory_values,
    next_memory_seq,
    revision_values,
)
from core.validation import content_hash
from core.writer import WriteTx

_CHUNK = 400


class WrittenObserver(Protocol):
    def memories_written(
        self, tx: WriteTx, memories: Sequence[Memory], *, fresh: bool = False
    ) -> None: ...


def new_memory_id(now_ms: int) -> str:
    """A fresh id: the creation time (so ids sort roughly by age and append to the index) plus
    64 random bits."""
    return f"m_{now_ms:012x}{secrets.token_hex(8)}"


def refused_forgotten(forgotten_by: str | None) -> WriteResult:
    """The refusal of a write that would bring back what was forgotten; `forgotten_by` is the
    tombstone's (who forgot it: `human`, `notes`, `system` for an expiry, or an agent's name)."""
    return WriteResult(
        WriteStatus.REFUSED,
        reason_code="forgotten",
        reason=f"{who_forgot(forgotten_by)}; Cairn will not store it again",
    )


def who_forgot(forgotten_by: str | None) -> str:
    """Who forgot a memory, said as a clause: "a person forgot this memory", "the agent
    code-helper forgot this memory", ..."""
    if forgotten_by == Surface.HUMAN.value:
        return "a person forgot this memory"
    if forgotten_by == Surface.NOTES.value:
        return "this memory was removed with its file from the notes folder"
    if forgotten_by == Surface.SYSTEM.value:
        return "this memory expired and Cairn removed it"
    if forgotten_by == Surface.IMPORT.value or not forgotten_by:
        return "this memory was forgotten"
    return f"the agent {forgotten_by} forgot this memory"


def _buried(conn: sqlite3.Connection, hashes: Sequence[str]) -> dict[tuple[str, str, str], str]:
    """(content hash, scope, workspace) of these texts' tombstones -> who forgot it (the
    latest)."""
    out: dict[tuple[str, str, str], str] = {}
    for start in range(0, len(hashes), _CHUNK):
        chunk = sorted(set(hashes[start : start + _CHUNK]))
        marks = ", ".join("?" for _ in chunk)
        for h, scope, ws, by in conn.execute(
            "SELECT content_hash, scope, coalesce(workspace_id, ''), forgotten_by "
            f"FROM tombstone t WHERE content_hash IN ({marks}) AND {tombstones.NOT_EXPIRED} "
            "ORDER BY forgotten_at",
            chunk,
        ):
            out[(h, scope, ws)] = by
    return out


def insert_new(
    tx: WriteTx,
    caller: Caller,
    memories: Sequence[Memory],
    *,
    now: int,
    observers: Sequence[WrittenObserver],
    check_duplicates: bool = True,
) -> list[WriteResult]:
    """Insert prepared memories (ids assigned here unless already set); one result per input.

    An input whose content already exists (same scope, workspace and session, active or archived)
    returns that memory with `duplicate=True`; for agents, content matching a tombstone in the same
    scope and workspace is refused.
    """
    conn = tx.conn
    hashes = [content_hash(m.content) for m in memories]
    existing: dict[tuple[str, str, str, str], str] = {}
    if check_duplicates:
        for start in range(0, len(hashes), _CHUNK):
            chunk = sorted(set(hashes[start : start + _CHUNK]))
            marks = ", ".join("?" for _ in chunk)
            for mid, h, scope, ws, sid in conn.execute(
                "SELECT id, content_hash, scope, coalesce(workspace_id, ''), "
                f"coalesce(session_id, '') FROM memory WHERE content_hash IN ({marks}) "
                "AND status IN ('active', 'archived') "
                "AND (expires_at IS NULL OR expires_at > ?)",  # an expired one is not kept
                [*chunk, now],
            ):
                existing.setdefault((h, scope, ws, sid), mid)
    buried = _buried(conn, hashes) if caller.surface is Surface.AGENT else {}
    results: list[WriteResult | str] = []  # a str is the id of an existing duplicate
    fresh: list[Memory] = []
    fresh_hashes: list[str] = []
    for memory, h in zip(memories, hashes, strict=True):
        ws, sid = memory.workspace_id or "", memory.session_id or ""
        key = (h, memory.scope.value, ws, sid)
        if key in existing:
            results.append(existing[key])
            continue
        if (h, memory.scope.value, ws) in buried:
            results.append(refused_forgotten(buried[(h, memory.scope.value, ws)]))
            continue
        stamped = memory if memory.id else replace(memory, id=new_memory_id(now))
        if check_duplicates:
            existing[key] = stamped.id
        fresh.append(stamped)
        fresh_hashes.append(h)
        results.append(WriteResult.stored(stamped))
    if fresh:
        first_seq = next_memory_seq(conn, len(fresh))
        fresh = [replace(m, seq=first_seq + i) for i, m in enumerate(fresh)]
        insert_memories(
            conn,
            [
                memory_values(m, seq=m.seq, content_hash=h)
                for m, h in zip(fresh, fresh_hashes, strict=True)
            ],
        )
        actor = caller.actor
        insert_revisions(
            conn,
            [revision_values(m, actor=actor, action="write", reason=None, at=now) for m in fresh],
        )
        for observer in observers:
            observer.memories_written(tx, fresh, fresh=True)
        audit.record_many(tx, caller, "write", fresh, at=now)
    duplicate_ids = [r for r in results if isinstance(r, str)]
    known = {m.id: m for m in fresh}
    if duplicate_ids:
        known.update(fetch_memories(conn, duplicate_ids, now))
    return [
        WriteResult.stored(known[r], duplicate=True) if isinstance(r, str) else r for r in results
    ]
