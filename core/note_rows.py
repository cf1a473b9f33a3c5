"""The `notes_file` table: what Cairn knows about each file of the notes folder (see
`core/notes.py`), the files a pass reads, and the reads and writes of their rows."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, replace

from core import scanner
from core.database import in_lists
from core.store import Store
from core.writer import WriteTx

GONE = -1
UNREADABLE = -2
SELECT_ROWS = "SELECT path, memory_id, content_hash, mtime_ns, size, error FROM notes_file"


@dataclass(frozen=True)
class Row:
    path: str
    memory_id: str
    content_hash: str
    mtime_ns: int
    size: int
    error: str | None

    @property
    def gone(self) -> bool:
        return self.size == GONE


@dataclass(frozen=True)
class File:
    """A file this pass read, or tried to: `problem` says why it cannot be taken in as it is."""

    path: str
    mtime_ns: int
    size: int
    data: bytes | None
    content_hash: str
    problem: str | None = None
    unreadable: bool = False  # could not be opened: retried on every pass, whatever its stat

    def row(self, memory_id: str, error: str | None = None) -> Row:
        if self.unreadable:
            return Row(self.path, memory_id, "", 0, UNREADABLE, error)
        return Row(self.path, memory_id, self.content_hash, self.mtime_ns, self.size, error)


def select_rows(conn: sqlite3.Connection, only: set[str] | None) -> dict[str, Row]:
    if only is None:
        return {r[0]: Row(*r) for r in conn.execute(SELECT_ROWS)}
    out: dict[str, Row] = {}
    paths = sorted(only)
    for chunk, marks in in_lists(paths):
        query = SELECT_ROWS + " WHERE path IN (" + marks + ")"
        out.update((r[0], Row(*r)) for r in conn.execute(query, chunk))
    return out


def owning_row(conn: sqlite3.Connection, memory_id: str) -> Row | None:
    """The row of the file whose memory this is (one that is there before one that is gone)."""
    row = conn.execute(
        SELECT_ROWS + " WHERE memory_id = ? ORDER BY size = -1, path LIMIT 1", (memory_id,)
    ).fetchone()
    return Row(*row) if row is not None else None


def write_rows(store: Store, rows: list[Row], *, drop: Iterable[str] = ()) -> None:
    dropped = list(drop)
    if not rows and not dropped:
        return

    def job(tx: WriteTx) -> None:
        for path in dropped:
            drop_row(tx, path)
        for row in rows:
            put_row(tx, row)

    store.writer.run(job)


def put_row(tx: WriteTx, row: Row) -> None:
    if row.error is not None:
        # An error can quote a front-matter value back (an unknown kind): never a secret.
        row = replace(row, error=scanner.redact(row.error))
    tx.conn.execute(
        "INSERT INTO notes_file (path, memory_id, content_hash, mtime_ns, size, error) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET memory_id = excluded.memory_id,"
        " content_hash = excluded.content_hash, mtime_ns = excluded.mtime_ns, "
        "size = excluded.size, error = excluded.error",
        (row.path, row.memory_id, row.content_hash, row.mtime_ns, row.size, row.error),
    )


def drop_row(tx: WriteTx, path: str, memory_id: str | None = None) -> None:
    """Drop the row of `path` - with `memory_id`, only while it still names that memory (a note
    moved away from a path this pass wrote another note's row for, as in a swap)."""
    if memory_id is None:
        tx.conn.execute("DELETE FROM notes_file WHERE path = ?", (path,))
    else:
        tx.conn.execute(
            "DELETE FROM notes_file WHERE path = ? AND memory_id = ?", (path, memory_id)
        )


def move_row(tx: WriteTx, row: Row, origin: Row) -> None:
    """A note moved from `origin`'s path: its row at the new path, the old one dropped."""
    put_row(tx, row)
    if origin.path != row.path:
        drop_row(tx, origin.path, origin.memory_id)
