"""The memory writes of a notes-folder pass: archiving the memories of files that are gone,
bringing existing memories in line with their files, new memories for new files - each with its
`notes_file` rows in the same transaction - and the tally of what the pass did."""

from __future__ import annotations

import dataclasses
import logging
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from core import tombstones
from core.clock import Clock
from core.database import in_lists
from core.errors import CairnError, CallerError, TooLarge
from core.memory_service import MemoryService
from core.model import Caller, Memory, Scope, Status, Surface, Tier, WriteResult, WriteStatus
from core.note_file import Note, shown
from core.note_rows import (
    GONE,
    File,
    Row,
    drop_row,
    owning_row,
    put_row,
    select_rows,
    write_rows,
)
from core.note_texts import (
    SELECT_FORGOTTEN,
    forgotten_text,
    held_elsewhere,
    holds,
    same_text_as,
    text_key,
)
from core.ownership import NOTES_SOURCE
from core.records import fetch_memory
from core.requests import UpdateRequest, WriteRequest
from core.store import Store
from core.validation import content_hash
from core.writer import WriteTx

log = logging.getLogger(__name__)

_BATCH = 200


@dataclass(frozen=True)
class SyncReport:
    """What one pass did. `errors` counts files this pass tried and could not take in; a file
    that failed before and has not changed since counts as `unchanged` (see `errors()`)."""

    added: int = 0
    updated: int = 0
    moved: int = 0
    archived: int = 0
    unchanged: int = 0
    errors: int = 0

    def to_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclass
class Tally:
    added: int = 0
    updated: int = 0
    moved: int = 0
    archived: int = 0
    unchanged: int = 0
    errors: int = 0

    def report(self) -> SyncReport:
        return SyncReport(**dataclasses.asdict(self))


@dataclass(frozen=True)
class Change:
    """A file whose memory already exists (or is adopted): update it to the file."""

    file: File
    note: Note
    caller: Caller
    memory_id: str
    old_path: str | None = None  # the row this file takes over (a move)
    counts_as: str = "updated"


class NoteWrites:
    """The writes of a pass, through the memory service as `Surface.NOTES`."""

    def __init__(self, memories: MemoryService, store: Store, clock: Clock) -> None:
        self._memories = memories
        self._store = store
        self._clock = clock

    def archive(self, vanished: list[Row], tally: Tally, *, forget_rows: bool = False) -> None:
        """Files that are gone: archive their memories (never forget), keep their rows (drop
        them with `forget_rows`: rows whose path must not stay recorded)."""
        drop = [r.path for r in vanished if not r.memory_id or (forget_rows and r.gone)]
        keep = [r for r in vanished if r.memory_id and not (forget_rows and r.gone)]
        if drop:
            write_rows(self._store, [], drop=drop)
        caller = Caller(Surface.NOTES)
        for chunk in _chunks(keep, _BATCH):

            def job(tx: WriteTx, chunk: list[Row] = chunk) -> int:
                archived = 0
                for row in chunk:
                    before = fetch_memory(tx.conn, row.memory_id, self._clock.now_ms())
                    # A forgotten or purged memory is not brought back: its path is free again.
                    lost = before is None or before.status is Status.FORGOTTEN
                    try:
                        if not lost:
                            with tx.db.atomic():
                                self._memories.set_state_in(
                                    tx, caller, row.memory_id, "archive", archived=True
                                )
                                archived += before is not None and before.status is Status.ACTIVE
                    except CallerError as e:  # superseded: nothing to archive
                        log.info("notes: %s: memory not archived: %s", shown(row.path), e.message)
                    if forget_rows or lost:
                        drop_row(tx, row.path)
                    else:
                        put_row(tx, replace(row, mtime_ns=GONE, size=GONE, error=None))
                return archived

            tally.archived += self._store.writer.run(job)

    def update(self, changes: list[Change], tally: Tally) -> list[tuple[File, Note, Caller]]:
        """Bring existing memories in line with their files (moves included). Returns the files
        whose project note moved to another workspace: their old memory is archived, and they
        are written as new memories."""
        rebound: list[tuple[File, Note, Caller]] = []
        for chunk in self._batches(changes):

            def job(tx: WriteTx, chunk: list[Change] = chunk) -> list[str]:
                return self._update_batch(tx, chunk)

            outcomes = self._store.writer.run(job)
            for change, outcome in zip(chunk, outcomes, strict=True):
                if outcome == "error":
                    tally.errors += 1
                elif outcome == "rebind":
                    rebound.append((change.file, change.note, change.caller))
                elif outcome == "forgotten" or (
                    outcome == "unchanged" and change.counts_as == "updated"
                ):
                    tally.unchanged += 1
                else:
                    setattr(tally, change.counts_as, getattr(tally, change.counts_as) + 1)
        return rebound

    def _batches(self, changes: list[Change]) -> list[list[Change]]:
        """The changes in batches of at most _BATCH, one transaction each - except that notes
        taking a text another changing note's memory holds now go in one batch with that note,
        however many (a swap lands only when both its sides do)."""
        if len(changes) <= _BATCH:
            return [changes] if changes else []
        held: dict[tuple[str, str, str], list[str]] = {}
        conn = self._store.read_db.conn()
        for chunk, marks in in_lists(sorted({c.memory_id for c in changes})):
            query = "SELECT id, content_hash, scope, coalesce(workspace_id, '') FROM memory "
            query += f"WHERE id IN ({marks})"
            for mid, chash, scope, workspace in conn.execute(query, chunk):
                held.setdefault((chash or "", scope, workspace), []).append(mid)
        together: set[str] = set()
        for c in changes:
            holders = [m for m in held.get(text_key(c.note, c.caller), []) if m != c.memory_id]
            if holders:
                together.update([c.memory_id, *holders])
        contested = [c for c in changes if c.memory_id in together]
        rest = [c for c in changes if c.memory_id not in together]
        return ([contested] if contested else []) + list(_chunks(rest, _BATCH))

    def _update_batch(self, tx: WriteTx, batch: list[Change]) -> list[str]:
        """Inside a write job: `_update_one` for each change. A note may take the text another
        note of the batch holds now when that other note's change takes its memory to another
        text (two notes swapping their texts) - but only if that change lands; when one does
        not, the batch is taken back and run again with every such note refused."""
        leaving = {c.memory_id: text_key(c.note, c.caller) for c in batch}
        passed: list[tuple[str, tuple[str, str, str]]] = []  # (holder, text) a change went past
        mark = len(tx.changes)
        with tx.db.savepoint() as batch_savepoint:
            outcomes = [self._update_one(tx, c, leaving, passed) for c in batch]
            now = self._clock.now_ms()
            if not any(holds(tx.conn, mid, key, now) for mid, key in passed):
                return outcomes
            batch_savepoint.rollback(begin=False)
        del tx.changes[mark:]  # what the changes taken back announced did not happen
        return [self._update_one(tx, c) for c in batch]

    def _update_one(
        self,
        tx: WriteTx,
        change: Change,
        leaving: dict[str, tuple[str, str, str]] | None = None,
        passed: list[tuple[str, tuple[str, str, str]]] | None = None,
    ) -> str:
        """Inside a write job: one file's memory updated (and unarchived), its row written.
        `leaving` names the memories whose notes change in this batch (-> their new text), whose
        present text this note may take; `passed` collects the ones it took it from.
        Returns "updated", "unchanged", "forgotten" (the text a person forgot: left out),
        "rebind" (write the file as a new memory) or "error"."""
        f, note = change.file, change.note
        current = fetch_memory(tx.conn, change.memory_id, self._clock.now_ms())
        moved_from = change.old_path if change.old_path != f.path else None
        if current is None or current.status is Status.FORGOTTEN:
            if moved_from is not None:
                drop_row(tx, moved_from, change.memory_id)
            if current is None:
                return "rebind"  # the memory was purged
            tomb = tombstones.fetch(tx.conn, current.id)
            if tomb is None or tomb.content_hash != content_hash(note.content):
                return "rebind"  # other text than the person forgot: a new note
            # The text a person forgot: left out, and that is no error (they asked for it).
            put_row(tx, f.row(current.id))
            return "forgotten"
        rebind = (
            current.scope is Scope.PROJECT
            and note.scope is Scope.PROJECT
            and current.workspace_id != change.caller.workspace_id
        )  # another project's memory now: archive this one, write a new one
        # One memory per text, as for a new file: the memory keeps the last version it could.
        error = (
            None
            if rebind
            else held_elsewhere(
                tx.conn,
                current,
                note,
                change.caller,
                self._clock.now_ms(),
                leaving=leaving or {},
                passed=passed if passed is not None else [],
            )
        )
        outcome = "error"
        if error is None:
            try:
                with tx.db.atomic():
                    if rebind:
                        self._memories.set_state_in(
                            tx, change.caller, current.id, "archive", archived=True
                        )
                        if moved_from is not None:
                            drop_row(tx, moved_from, change.memory_id)
                        return "rebind"
                    result = self._memories.update_in(
                        tx, change.caller, _update_request(current, note, NOTES_SOURCE + f.path)
                    )
                    stored = result.status is WriteStatus.STORED
                    revived = stored and current.status is Status.ARCHIVED
                    if revived:
                        self._memories.set_state_in(
                            tx, change.caller, current.id, "unarchive", archived=False
                        )
                    error = None if stored else result.reason or "the note was not taken in"
                    outcome = "updated" if revived or not result.duplicate else "unchanged"
            except CallerError as e:
                error = _describe(e)
        put_row(tx, f.row(current.id, error))
        if moved_from is not None:
            drop_row(tx, moved_from, change.memory_id)
        return "error" if error is not None else outcome

    def add(
        self, items: list[tuple[File, Note, Caller]], tally: Tally, *, by_source: bool = True
    ) -> None:
        """New files: new memories through `write_many`, in batches per caller; each batch's
        rows are written in its transaction, so no memory is ever left without its row. A file
        whose path names a memory no row names (the rows were lost, or the memory came with an
        import) adopts that memory instead, changed since or not - unless `by_source` is off
        (files whose memory was just found to belong elsewhere: a project note rebound)."""
        adopt: list[Change] = []
        if by_source and items:
            left = self._left_behind({f.path for f, _, _ in items})
            adopt = [Change(f, n, c, left[f.path]) for f, n, c in items if f.path in left]
            items = [item for item in items if item[0].path not in left]
        forgotten = self._forgotten_texts(items)
        refused: list[Row] = []
        groups: dict[Caller, list[tuple[File, Note]]] = {}
        for f, note, caller in items:
            by = forgotten.get(text_key(note, caller))
            if by is not None:
                refused.append(f.row("", by))
            else:
                groups.setdefault(caller, []).append((f, note))
        if refused:
            tally.errors += len(refused)
            before = select_rows(self._store.read_db.conn(), {r.path for r in refused})
            write_rows(self._store, [r for r in refused if r != before.get(r.path)])
        for caller, group in groups.items():
            for chunk in _chunks(group, _BATCH):
                requests = [
                    WriteRequest(
                        content=note.content,
                        kind=note.kind,
                        scope=note.scope,
                        tags=note.tags,
                        importance=note.importance,
                        summary=note.summary,
                        source=NOTES_SOURCE + f.path,
                    )
                    for f, note in chunk
                ]
                landed: list[tuple[Row | None, Change | None]] = []

                def record(
                    tx: WriteTx,
                    results: list[WriteResult | CairnError],
                    caller: Caller = caller,
                    chunk: list[tuple[File, Note]] = chunk,
                    landed: list[tuple[Row | None, Change | None]] = landed,
                ) -> None:
                    landed.clear()
                    claimed: dict[str, str] = {}  # memory id -> path, in this batch
                    for (f, note), result in zip(chunk, results, strict=True):
                        landed.append(
                            self._landed(tx.conn, f, note, caller, result, claimed=claimed)
                        )
                    rows = [row for row, _ in landed if row is not None]
                    # a note failing as before (tried again at each pass) is not written again
                    before = select_rows(tx.conn, {r.path for r in rows if r.error is not None})
                    for row in rows:
                        if row.error is None or row != before.get(row.path):
                            put_row(tx, row)

                self._memories.write_many(caller, requests, then=record)
                for row, change in landed:
                    if change is not None:
                        adopt.append(change)
                    elif row is not None and row.error is None:
                        tally.added += 1
                    else:
                        tally.errors += 1
        rebound = self.update(adopt, tally) if adopt else []
        if rebound:  # an adopted memory purged meanwhile, or another project's: write afresh
            self.add(rebound, tally, by_source=False)

    def _left_behind(self, paths: set[str]) -> dict[str, str]:
        """path -> the memory whose source names it and that no row names (the active one
        before an archived one, the newest first): the memory a note at that path left behind
        when Cairn lost its row, or that came with an import from a store that followed it.
        Only these paths' sources are looked up, through the index of notes' sources (schema
        2.3; until 2026-11-30 every notes memory was read, and the paths picked out here)."""
        conn = self._store.read_db.conn()
        found: dict[str, str] = {}
        sources = sorted(NOTES_SOURCE + p for p in paths)
        for chunk, marks in in_lists(sources):
            # The first term is, word for word, the condition of the index `memory_notes`
            # (schema 2.3): SQLite uses a partial index only for a query that spells it.
            query = (
                "SELECT id, source FROM memory WHERE substr(source, 1, 6) = 'notes:' "  # noqa: S608 - marks only
                "AND source IN (" + marks + ") AND status IN ('active', 'archived') "
                "AND id NOT IN (SELECT memory_id FROM notes_file) ORDER BY status = 'active', seq"
            )
            for mid, source in conn.execute(query, chunk):
                found[source[len(NOTES_SOURCE) :]] = mid  # the later rows win: active, then newer
        return found

    def _forgotten_texts(
        self, items: list[tuple[File, Note, Caller]]
    ) -> dict[tuple[str, str, str], str]:
        """Which of these notes hold the text of a note whose memory was forgotten (in the same
        scope and workspace): their key -> why they are refused. A person forgot it on purpose,
        so no file brings it back (the forgotten note's own file is left out without an error)."""
        hashes = sorted({text_key(note, caller)[0] for _, note, caller in items})
        out: dict[tuple[str, str, str], str] = {}
        conn = self._store.read_db.conn()
        for chunk, marks in in_lists(hashes):
            query = SELECT_FORGOTTEN + " AND t.content_hash IN (" + marks + ")"
            for chash, scope, workspace, mid, by in conn.execute(query, (NOTES_SOURCE, *chunk)):
                out[(chash, scope, workspace)] = forgotten_text(mid, by)
        return out

    def _landed(
        self,
        conn: sqlite3.Connection,
        f: File,
        note: Note,
        caller: Caller,
        result: WriteResult | CairnError,
        *,
        claimed: dict[str, str],
    ) -> tuple[Row | None, Change | None]:
        """The row for a file after its write, or the memory it should adopt instead."""
        if isinstance(result, CairnError):
            return f.row("", _describe(result)), None
        if result.status is not WriteStatus.STORED or result.id is None:
            return f.row("", result.reason or "the note was not taken in"), None
        if not result.duplicate:
            claimed[result.id] = f.path
            return f.row(result.id), None
        # The same text is stored already (exact duplicates are one memory).
        mid = result.id
        holder = claimed.get(mid)
        owner = owning_row(conn, mid) if holder is None else None
        if holder is None and owner is not None and not owner.gone and owner.path != f.path:
            holder = owner.path
        if holder is not None:
            return f.row("", same_text_as(holder, mid)), None
        memory = result.memory
        ours = owner is not None or (
            memory is not None
            and memory.source == NOTES_SOURCE + f.path
            and memory.tier is Tier.HUMAN
            and memory.agent is None
        )
        if not ours:
            return f.row("", same_text_as(None, mid)), None
        claimed[mid] = f.path
        old_path = owner.path if owner is not None else None
        # An existing memory taken up again is no new one (until 2026-11-30 it counted as added).
        counts_as = "moved" if old_path is not None and old_path != f.path else "updated"
        return None, Change(f, note, caller, mid, old_path, counts_as)


def _update_request(current: Memory, note: Note, source: str) -> UpdateRequest:
    return UpdateRequest(
        id=current.id,
        if_revision=current.revision,
        content=note.content,
        summary=note.summary or "",  # "" clears a summary the front matter no longer gives
        kind=note.kind,
        scope=note.scope,
        tags=note.tags,
        importance=note.importance,
        source=source,
    )


def _describe(e: CairnError) -> str:
    if isinstance(e, TooLarge) and e.data.get("field") == "content":
        return (
            f"the note's text is {e.data.get('size')} bytes; a memory holds at most "
            f"{e.data.get('limit')} bytes (limits.max_content_bytes) - split it into smaller notes"
        )
    return e.message


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
