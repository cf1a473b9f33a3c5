"""Relations between memories: `supersedes` (closed when made) and `contradicts` (open until a
person resolves it), stored once and read from either side."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from core.errors import NotFound
from core.model import Relation, RelationKind

RELATION_COLUMNS: tuple[str, ...] = (
    "id",
    "kind",
    "from_id",
    "to_id",
    "open",
    "created_at",
    "created_by",
    "note",
    "resolved_at",
    "resolved_by",
    "resolution",
)
_COLUMNS = ", ".join(RELATION_COLUMNS)


def relation_from_row(row: Sequence[Any]) -> Relation:
    """Build a Relation from a row whose first values are RELATION_COLUMNS (later ones unread)."""
    return Relation(
        id=int(row[0]),
        kind=RelationKind(row[1]),
        from_id=row[2],
        to_id=row[3],
        open=bool(row[4]),
        created_at=int(row[5]),
        created_by=row[6],
        note=row[7],
        resolved_at=row[8],
        resolved_by=row[9],
        resolution=row[10],
    )


def fetch_relation(conn: sqlite3.Connection, relation_id: int) -> Relation:
    row = conn.execute(f"SELECT {_COLUMNS} FROM relation WHERE id = ?", (relation_id,)).fetchone()
    if row is None:
        raise NotFound(f"relation {relation_id} not found", data={"id": relation_id})
    return relation_from_row(row)


def relations_of(conn: sqlite3.Connection, memory_id: str) -> list[Relation]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM relation WHERE from_id = ? OR to_id = ? ORDER BY id",
        (memory_id, memory_id),
    ).fetchall()
    return [relation_from_row(r) for r in rows]


def open_contradictions(conn: sqlite3.Connection, memory_ids: Sequence[str]) -> list[Relation]:
    """Open `contradicts` relations touching any of `memory_ids`."""
    if not memory_ids:
        return []
    marks = ", ".join("?" for _ in memory_ids)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM relation WHERE kind = 'contradicts' AND open = 1 "
        f"AND (from_id IN ({marks}) OR to_id IN ({marks})) ORDER BY id",
        [*memory_ids, *memory_ids],
    ).fetchall()
    return [relation_from_row(r) for r in rows]


def link_supersedes(
    conn: sqlite3.Connection, new_id: str, old_id: str, *, note: str | None, at: int, by: str
) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO relation (kind, from_id, to_id, open, note, created_at, created_by) "
        "VALUES (?, ?, ?, 0, ?, ?, ?)",
        (RelationKind.SUPERSEDES.value, new_id, old_id, note, at, by),
    )


def open_contradiction(
    conn: sqlite3.Connection, a_id: str, b_id: str, *, note: str | None, at: int, by: str
) -> int:
    """Open (or re-open) the contradiction between two memories; returns its id."""
    existing = conn.execute(
        "SELECT id FROM relation WHERE kind = 'contradicts' AND open = 1 AND "
        "((from_id = ? AND to_id = ?) OR (from_id = ? AND to_id = ?))",
        (a_id, b_id, b_id, a_id),
    ).fetchone()
    if existing is not None:
        return int(existing[0])
    row = conn.execute(
        "INSERT INTO relation (kind, from_id, to_id, open, note, created_at, created_by) "
        "VALUES ('contradicts', ?, ?, 1, ?, ?, ?) "
        "ON CONFLICT(kind, from_id, to_id) DO UPDATE SET open = 1, note = excluded.note, "
        "resolved_at = NULL, resolved_by = NULL, resolution = NULL RETURNING id",
        (a_id, b_id, note, at, by),
    ).fetchone()
    return int(row[0])


def close_contradiction(
    conn: sqlite3.Connection, relation_id: int, *, keep: str, at: int, by: str
) -> None:
    conn.execute(
        "UPDATE relation SET open = 0, resolved_at = ?, resolved_by = ?, resolution = ? "
        "WHERE id = ?",
        (at, by, keep, relation_id),
    )


def close_contradictions_of(
    conn: sqlite3.Connection, memory_id: str, *, resolution: str, at: int, by: str
) -> list[Relation]:
    """Close the open contradictions `memory_id` is in, because it is going (`resolution`:
    `forgotten` or `purged`); returns them as they were, open."""
    found = open_contradictions(conn, [memory_id])
    for rel in found:
        close_contradiction(conn, rel.id, keep=resolution, at=at, by=by)
    return found


def superseded_by(conn: sqlite3.Connection, memory_id: str) -> list[str]:
    """The memories `memory_id` superseded that are still superseded by it, oldest link first."""
    rows = conn.execute(
        "SELECT r.to_id FROM relation r JOIN memory m ON m.id = r.to_id "
        "WHERE r.kind = 'supersedes' AND r.from_id = ? AND m.status = 'superseded' "
        "AND m.superseded_by = ? ORDER BY r.id",
        (memory_id, memory_id),
    ).fetchall()
    return [str(r[0]) for r in rows]


def unlink_supersedes(conn: sqlite3.Connection, new_id: str, old_id: str) -> None:
    conn.execute(
        "DELETE FROM relation WHERE kind = 'supersedes' AND from_id = ? AND to_id = ?",
        (new_id, old_id),
    )
