"""Tombstones: what a forgotten or purged memory leaves behind so that it cannot come back.

A tombstone keeps the memory's id, a hash of its content, its scope and workspace, who removed
it, when and why - never the content. A dedupe-key upsert that would recreate the id, an agent
write of the same content in the same scope and workspace, and an import of it are all refused.
"""

from __future__ import annotations

import sqlite3

from core.model import Memory, Tombstone


def tombstoned_id(conn: sqlite3.Connection, memory_id: str) -> bool:
    row = conn.execute("SELECT 1 FROM tombstone WHERE memory_id = ?", (memory_id,)).fetchone()
    return row is not None


def tombstoned_content(conn: sqlite3.Connection, memory: Memory, chash: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM tombstone WHERE content_hash = ? AND scope = ? "
        "AND coalesce(workspace_id, '') = ? LIMIT 1",
        (chash, memory.scope.value, memory.workspace_id or ""),
    ).fetchone()
    return row is not None


def bury(
    conn: sqlite3.Connection,
    memory: Memory,
    chash: str,
    *,
    by: str,
    at: int,
    reason: str | None,
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO tombstone (memory_id, content_hash, scope, workspace_id, "
        "session_id, forgotten_by, forgotten_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            memory.id,
            chash,
            memory.scope.value,
            memory.workspace_id,
            memory.session_id,
            by,
            at,
            reason,
        ),
    )


def fetch(conn: sqlite3.Connection, memory_id: str) -> Tombstone | None:
    row = conn.execute(
        "SELECT memory_id, content_hash, forgotten_by, forgotten_at, reason FROM tombstone "
        "WHERE memory_id = ?",
        (memory_id,),
    ).fetchone()
    return Tombstone(row[0], row[1], row[2], int(row[3]), row[4]) if row else None
