"""Tombstones: what a forgotten or purged memory leaves behind so that it cannot come back.

A tombstone keeps the memory's id, a hash of its content, its scope and workspace, who removed
it, when and why - never the content. A dedupe-key upsert that would recreate the id, an agent
write of the same content in the same scope and workspace, and an import of it are all refused.

Except after an expiry: a memory Cairn purged because its time was up was not judged wrong, so
its tombstone (by `system`, reason `expired`) refuses only an import; the same text or dedupe key
may be written again (until 2026-11-30 that was refused for good, for every agent and session).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from core.model import Memory, Surface, Tombstone

EXPIRED_BY = Surface.SYSTEM.value  # who purges an expired memory
EXPIRED_REASON = "expired"
# SQL: a tombstone that is not an expiry's (`t` is the tombstone table)
NOT_EXPIRED = f"NOT (t.forgotten_by = '{EXPIRED_BY}' AND t.reason IS '{EXPIRED_REASON}')"


def tombstoned_id(conn: sqlite3.Connection, memory_id: str) -> str | None:
    """Who forgot this memory id (its tombstone's `forgotten_by`); None when nothing did - or
    when it only expired (see `lift_expired`)."""
    row = conn.execute(
        f"SELECT forgotten_by FROM tombstone t WHERE memory_id = ? AND {NOT_EXPIRED}",
        (memory_id,),
    ).fetchone()
    return str(row[0]) if row is not None else None


def lift_expired(conn: sqlite3.Connection, memory_id: str) -> None:
    """Remove the tombstone an expiry left for this id, which is about to live again."""
    conn.execute(
        f"DELETE FROM tombstone AS t WHERE memory_id = ? AND NOT ({NOT_EXPIRED})", (memory_id,)
    )


def tombstoned_content(conn: sqlite3.Connection, memory: Memory, chash: str) -> str | None:
    """Who forgot this text in this scope and workspace (the latest such tombstone's
    `forgotten_by`); None when nobody did (an expiry is nobody's decision)."""
    row = conn.execute(
        "SELECT forgotten_by FROM tombstone t WHERE content_hash = ? AND scope = ? "
        f"AND coalesce(workspace_id, '') = ? AND {NOT_EXPIRED} "
        "ORDER BY forgotten_at DESC LIMIT 1",
        (chash, memory.scope.value, memory.workspace_id or ""),
    ).fetchone()
    return str(row[0]) if row is not None else None


def buried_texts(conn: sqlite3.Connection, hashes: Iterable[str]) -> set[str]:
    """Which of these content hashes a tombstone holds (in any scope)."""
    return {
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT t.content_hash FROM tombstone t "
            "JOIN json_each(?) j ON j.value = t.content_hash",
            (json.dumps(sorted(set(hashes))),),
        )
    }


def only_expired(conn: sqlite3.Connection, hashes: Iterable[str]) -> set[str]:
    """Which of these content hashes only expiries' tombstones hold: text Cairn purged because
    its time was up, which nobody forgot."""
    rows = conn.execute(
        "SELECT t.content_hash FROM tombstone t JOIN json_each(?) j ON j.value = t.content_hash "
        f"GROUP BY t.content_hash HAVING sum({NOT_EXPIRED}) = 0",
        (json.dumps(sorted(set(hashes))),),
    )
    return {str(row[0]) for row in rows}


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


MASS_FORGET_WINDOW_MS = 3_600_000
MASS_FORGET_MIN = 5


def mass_forget(conn: sqlite3.Connection, actor: str, memory: Memory, now: int) -> str | None:
    """Why `actor` forgetting `memory` now is a mass deletion, or None. It is when this forget
    would make the actor's forgets in the memory's scope (and workspace) over the last hour
    number at least `MASS_FORGET_MIN` and more than half of what that scope held an hour ago
    (an agent's such forget waits for a person like any other proposal)."""
    since = now - MASS_FORGET_WINDOW_MS
    scope, workspace = memory.scope.value, memory.workspace_id
    gone_since, mine = conn.execute(
        "SELECT count(*), coalesce(sum(forgotten_by = ?), 0) FROM tombstone "
        "WHERE scope = ? AND workspace_id IS ? AND forgotten_at >= ?",
        (actor, scope, workspace, since),
    ).fetchone()
    if mine + 1 < MASS_FORGET_MIN:  # nearly every forget: no need to count the scope
        return None
    (live,) = conn.execute(
        "SELECT count(*) FROM memory WHERE scope = ? AND workspace_id IS ? "
        "AND status IN ('active', 'archived')",
        (scope, workspace),
    ).fetchone()
    held = live + gone_since  # what the scope held an hour ago, near enough
    if mine + 1 >= MASS_FORGET_MIN and 2 * (mine + 1) > held:
        return f"{mine + 1} of the {held} {scope} memories within an hour"
    return None
