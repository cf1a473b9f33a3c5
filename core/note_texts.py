"""One memory per text, as the notes folder keeps it: which memory holds a note's text, and
the refusals of a note whose text another memory holds or a person forgot."""

from __future__ import annotations

import sqlite3

from core.bulk import who_forgot
from core.model import Caller, Memory, Scope, Status
from core.note_file import Note
from core.ownership import NOTES_SOURCE
from core.records import fetch_memory
from core.validation import content_hash

SELECT_FORGOTTEN = (  # the tombstones of notes' memories
    "SELECT t.content_hash, t.scope, coalesce(t.workspace_id, ''), t.memory_id, t.forgotten_by "
    "FROM tombstone t JOIN memory m ON m.id = t.memory_id WHERE substr(m.source, 1, 6) = ?"
)


def text_key(note: Note, caller: Caller) -> tuple[str, str, str]:
    """A note's text as Cairn tells memories apart: its hash, scope and workspace."""
    workspace = caller.workspace_id if note.scope is Scope.PROJECT else None
    return content_hash(note.content), note.scope.value, workspace or ""


def held_elsewhere(
    conn: sqlite3.Connection,
    current: Memory,
    note: Note,
    caller: Caller,
    now: int,
    *,
    leaving: dict[str, tuple[str, str, str]],
    passed: list[tuple[str, tuple[str, str, str]]],
) -> str | None:
    """Why `current` cannot take the note's new text: another memory holds it (one memory per
    text in a scope, as `write` keeps it; the archived memory of a deleted note does not count),
    or a person forgot it as another note's text. None when it may. A note's memory named in
    `leaving` with another text than this one does not count: it is taking that text now, and
    is added to `passed` (the caller checks that it did)."""
    key = text_key(note, caller)
    chash, scope, workspace = key
    if chash == content_hash(current.content) and (scope, workspace) == (
        current.scope.value,
        current.workspace_id or "",
    ):
        return None  # neither the text nor where it lives is changing (a new scope may hold it)
    for mid, status, source in conn.execute(
        "SELECT id, status, source FROM memory WHERE content_hash = ? AND scope = ? "
        "AND coalesce(workspace_id, '') = ? AND session_id IS NULL AND id != ? "
        "AND status IN ('active', 'archived') AND (expires_at IS NULL OR expires_at > ?) "
        "ORDER BY status, id",
        (chash, scope, workspace, current.id, now),
    ):
        path = source[len(NOTES_SOURCE) :] if (source or "").startswith(NOTES_SOURCE) else None
        if path is not None and leaving.get(mid, key) != key:
            passed.append((mid, key))
            continue
        if path is None or status == Status.ACTIVE.value:
            return same_text_as(path, mid)
    query = SELECT_FORGOTTEN + " AND t.content_hash = ? AND t.scope = ? "
    query += "AND coalesce(t.workspace_id, '') = ? AND t.memory_id != ? LIMIT 1"
    for _, _, _, mid, by in conn.execute(
        query, (NOTES_SOURCE, chash, scope, workspace, current.id)
    ):
        return forgotten_text(mid, by)
    return None


def same_text_as(path: str | None, memory_id: str) -> str:
    """The refusal of a note whose text memory `memory_id` holds already (from the note at
    `path`, or not from the folder when None)."""
    if path is not None:
        return (
            f"the same text is already in Cairn from {path} (memory {memory_id}); Cairn keeps "
            "one memory per text - change one of the two notes"
        )
    return (
        f"the same text is already in Cairn as memory {memory_id}, which does not come from "
        "your notes folder; Cairn keeps one memory per text"
    )


def forgotten_text(memory_id: str, forgotten_by: str | None) -> str:
    return (
        f"this is the text of memory {memory_id}: {who_forgot(forgotten_by)}, and Cairn does not "
        "take it in again - change the note's text, or delete the file"
    )


def holds(conn: sqlite3.Connection, memory_id: str, key: tuple[str, str, str], now: int) -> bool:
    """Whether the note's memory `memory_id` still holds, active, the text `key` names."""
    memory = fetch_memory(conn, memory_id, now)
    if memory is None or memory.status is not Status.ACTIVE:
        return False
    held = (content_hash(memory.content), memory.scope.value, memory.workspace_id or "")
    return held == key
