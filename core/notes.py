"""The watched notes folder: each markdown file in it is one human memory, kept in step with it.

The file is the truth. A memory that mirrors a note carries `source = "notes:<relative path>"`,
and the memory service refuses every change to it from any surface but the notes folder
(`core/ownership.py`). What Cairn knows about each file lives in the `notes_file` table:

    path           the file's path relative to the folder, POSIX separators (the key)
    memory_id      the memory that mirrors the file; "" while the file never could be taken in
    content_hash   sha256 of the file's bytes when Cairn last read them ("" when it did not)
    mtime_ns, size the file's stat when Cairn last read it; size -1: the file is gone and its
                   memory archived; size -2: the file could not be opened (retried every pass)
    error          why the file's current version could not be taken in, or NULL; the memory,
                   if there is one, keeps the last version that could

A pass compares each file's stat with its row and reads only the files whose stat changed, so a
folder where nothing changed costs one directory walk and one query. Memories change only through
the memory service, as `Surface.NOTES` - the scanner, the index and the audit log all apply. A
row is written in the same transaction as the memory change (update, archive: `update_in`,
`set_state_in`; new memories: `write_many`'s `then`), so a pass that fails half way leaves no
memory without its row. Should the table be lost, the next pass rebuilds it: the file's text
comes back as an exact duplicate of a memory with this file's source, which the pass adopts.

A file whose path cannot be recorded (not UTF-8, a control character) gets no row: the pass
keeps why in memory for `errors()` and finds it again at every pass.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from core import scanner, tombstones
from core.bulk import who_forgot
from core.changes import ChangeSet, Topic
from core.clock import Clock
from core.database import in_lists
from core.errors import CairnError, CallerError, TooLarge
from core.failures import BackgroundFailures
from core.health import Warnings
from core.memory_service import MemoryService
from core.model import Caller, Memory, Scope, Status, Surface, Tier, WriteResult, WriteStatus
from core.note_file import (
    Note,
    eligible,
    folder_identity,
    name_problem,
    parse_note,
    relative_path,
    shown,
    stat_paths,
    walk_notes,
)
from core.ownership import NOTES_SOURCE
from core.records import fetch_memory
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.store import Store
from core.validation import content_hash
from core.workspace import WorkspaceRegistry
from core.writer import WriteTx

log = logging.getLogger(__name__)

SITE = "notes"  # where unexpected failures are counted (BackgroundFailures)
WARNING = "notes_folder"  # the health warning while files cannot be taken in
DEBOUNCE_S = 0.2  # events settle this long before a pass...
MAX_DELAY_S = 1.0  # ...but a steady stream of events waits no longer than this
POLL_S = 30.0  # how often an idle worker checks that its watch still holds (else: a full pass)
FRONT_MATTER_ALLOWANCE = 16 * 1024  # bytes a file may hold beyond the content limit
_GONE = -1
_UNREADABLE = -2
_BATCH = 200
_DEFAULTS_KEY = "notes_defaults"  # in `meta`: the default kind and scope notes were taken in with
_SELECT_ROWS = "SELECT path, memory_id, content_hash, mtime_ns, size, error FROM notes_file"
_SELECT_FORGOTTEN = (  # the tombstones of notes' memories
    "SELECT t.content_hash, t.scope, coalesce(t.workspace_id, ''), t.memory_id, t.forgotten_by "
    "FROM tombstone t JOIN memory m ON m.id = t.memory_id WHERE substr(m.source, 1, 6) = ?"
)


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


@dataclass(frozen=True)
class _Row:
    path: str
    memory_id: str
    content_hash: str
    mtime_ns: int
    size: int
    error: str | None

    @property
    def gone(self) -> bool:
        return self.size == _GONE


@dataclass(frozen=True)
class _File:
    """A file this pass read, or tried to: `problem` says why it cannot be taken in as it is."""

    path: str
    mtime_ns: int
    size: int
    data: bytes | None
    content_hash: str
    problem: str | None = None
    unreadable: bool = False  # could not be opened: retried on every pass, whatever its stat

    def row(self, memory_id: str, error: str | None = None) -> _Row:
        if self.unreadable:
            return _Row(self.path, memory_id, "", 0, _UNREADABLE, error)
        return _Row(self.path, memory_id, self.content_hash, self.mtime_ns, self.size, error)


@dataclass
class _Tally:
    added: int = 0
    updated: int = 0
    moved: int = 0
    archived: int = 0
    unchanged: int = 0
    errors: int = 0

    def report(self) -> SyncReport:
        return SyncReport(**dataclasses.asdict(self))


@dataclass(frozen=True)
class _Change:
    """A file whose memory already exists (or is adopted): update it to the file."""

    file: _File
    note: Note
    caller: Caller
    memory_id: str
    old_path: str | None = None  # the row this file takes over (a move)
    counts_as: str = "updated"


class NotesFolder:
    """The watched folder of markdown notes (`notes.folder`; off when empty).

    `sync` runs one pass; `start` runs one and then follows the folder's events (debounced,
    coalesced) on one worker thread; `close` stops it. `errors` lists the files that could not
    be taken in, with why. Passes never overlap.
    """

    def __init__(  # noqa: PLR0917 - the signature core/app.py wires, as agreed
        self,
        memories: MemoryService,
        store: Store,
        settings: Settings,
        clock: Clock,
        failures: BackgroundFailures,
        warnings: Warnings,
        *,
        workspaces: WorkspaceRegistry | None = None,
    ) -> None:
        self._memories = memories
        self._store = store
        self._clock = clock
        self._failures = failures
        self._warnings = warnings
        self._workspaces = workspaces or WorkspaceRegistry(store)
        self._max_bytes = memories.limits.max_content_bytes + FRONT_MATTER_ALLOWANCE
        self._folder: Path | None = None
        self._misconfigured: str | None = None
        # Files whose path Cairn cannot record (not UTF-8, ...): path -> why. Kept here, not in
        # notes_file - the path itself is what cannot be stored - and found again at each pass.
        self._refused: dict[str, str] = {}
        self._rows_checked = False  # whether this run looked for rows naming such a path
        self._configure(settings)
        self._halted = False  # the worker is asked to stop without closing (a new folder)
        self._pass_lock = threading.Lock()
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        # Renames the watch reported since the last pass: new path -> the path it came from
        # (the first, for a note renamed twice). A renamed note edited before its pass no
        # longer has its old bytes; this is how it keeps its memory.
        self._renamed: dict[str, str] = {}
        self._pending_full = False
        self._first_event = 0.0
        self._last_event = 0.0
        self._closed = False
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        self._watched: tuple[int, int] | None = None  # (device, inode) of the watched folder
        self._watch_failed = False
        self._rewatch = False  # the folder itself was moved or deleted: its watch is stale
        self.passes = 0  # completed passes, for tests and health

    def _configure(self, settings: Settings) -> None:
        self._default_kind = settings.text("notes.kind")
        self._default_scope = Scope(settings.text("notes.scope"))
        raw = settings.text("notes.folder").strip()
        expanded = os.path.expanduser(raw) if raw else ""
        self._folder = None
        self._refused = {}
        if expanded:
            absolute = os.path.isabs(expanded)
            self._folder = Path(os.path.realpath(expanded) if absolute else expanded)
        self._misconfigured = (
            f"notes.folder {raw!r} is not an absolute path (start it with / or ~); the notes "
            "folder is not watched"
            if expanded and not os.path.isabs(expanded)
            else None
        )

    @property
    def folder(self) -> Path | None:
        """The watched folder (symlinks resolved), or None when the notes folder is off."""
        return self._folder

    def file_state(self, path: str) -> str | None:
        """Why Cairn does not follow the note at `path` now, and what a person can do instead
        (for a refused change of its memory), or None when it does. Takes no lock: it is asked
        from inside a write, which a pass may be waiting for."""
        folder, misconfigured = self._folder, self._misconfigured
        if folder is None or misconfigured is not None:
            why = "empty" if folder is None else "not an absolute path"
            return (
                f"the notes folder is turned off (notes.folder is {why}), so Cairn does not "
                "follow that file - a person may set notes.folder to the folder again and edit "
                "the file, or forget the memory"
            )
        if not folder.is_dir():
            return (
                f"the notes folder {folder} is not there now (an unmounted drive?) - once it is "
                "back, edit or delete the file and Cairn follows it, or a person may forget the "
                "memory"
            )
        if not os.path.isfile(folder / path):
            return (
                "that file is not in the notes folder now - put it back and edit it, and Cairn "
                "follows it, or a person may forget the memory"
            )
        return None

    # -- one pass ----------------------------------------------------------------------------

    def sync(self) -> SyncReport:
        """One full pass: take in new files, update changed ones, follow moves, archive the
        memories of deleted files, and record what could not be taken in.

        Raises:
            EnvironmentFault: the store could not be written (the pass stops; the next retries).
        """
        return self._run_pass(None)

    def _run_pass(self, only: set[str] | None, renamed: dict[str, str] | None = None) -> SyncReport:
        folder = self._folder
        if folder is None:
            return SyncReport()
        with self._pass_lock:
            if self._closed:
                return SyncReport()
            if self._misconfigured is not None:
                self._set_warning(self._misconfigured)
                return SyncReport()
            present = folder.is_dir()
            if self._worker is not None:
                self._keep_watch(folder, present=present)
            if not present:
                # An unmounted drive looks like this: keep every memory as it is.
                self._set_warning(
                    f"the notes folder {folder} does not exist or is not a folder; its notes' "
                    "memories are left as they are"
                )
                return SyncReport()
            started = time.perf_counter()
            report = self._pass(folder, only, renamed or {})
            self._refresh_warning()
            self.passes += 1
        log.info(
            "notes pass (%s) in %.0f ms: %s",
            "full" if only is None else f"{len(only)} paths",
            (time.perf_counter() - started) * 1000,
            report.to_dict(),
        )
        return report

    def _pass(self, folder: Path, only: set[str] | None, renamed: dict[str, str]) -> SyncReport:
        if only is not None:  # the failing notes too: what these files did may be their cure
            only = only | self._failing() | set(self._refused)
        # A path that cannot be recorded has no row: it is never looked up (it cannot even be
        # sent to SQLite when it is not UTF-8).
        rows = self._rows(None if only is None else {p for p in only if not self._name_problem(p)})
        found = dict(walk_notes(folder)) if only is None else stat_paths(folder, only)
        tally = _Tally()
        if only is None and not self._rows_checked:
            # Once a run: rows an earlier version wrote for a path it should have refused (a
            # secret in a file's name) are dropped; their memories are archived.
            self._rows_checked = True
            unrecordable = [r for r in rows.values() if self._name_problem(r.path)]
            for r in unrecordable:
                del rows[r.path]
            self._archive(unrecordable, tally, forget_rows=True)
        tally.errors += self._refuse_names(found, rows, only)
        # Other defaults than the last full pass took the notes in with: every note is read
        # again (one that names no kind or scope takes the new ones), stat and bytes alike.
        defaults = f"{self._default_kind} {self._default_scope.value}"
        renew = only is None and self._defaults_taken() != defaults
        changed, touched = self._changed(
            folder, rows, found, tally, trust_stat=only is None and not renew, renew=renew
        )
        vanished = {p: r for p, r in rows.items() if not r.gone and p not in found}
        moves, rest = _pair_moves(changed, vanished, renamed)
        workspaces: dict[str, str] = {}
        updates: list[_Change] = []
        # A note moved over another (`mv b.md a.md`): the one it replaced is gone.
        replaced = [
            over
            for origin, f in moves
            if (over := rows.get(f.path)) is not None
            and not over.gone
            and over.memory_id not in ("", origin.memory_id)
        ]
        for origin, f in moves:
            prepared = self._prepare(f, workspaces)
            if isinstance(prepared, str):
                self._write_rows([f.row(origin.memory_id, prepared)], drop=[origin.path])
                tally.errors += 1
            else:
                updates.append(_Change(f, *prepared, origin.memory_id, origin.path, "moved"))
        # Archive before writing: a new file holding the text of one just deleted then meets
        # an archived memory, which it takes over, rather than an active one it would clash with.
        self._archive([*vanished.values(), *replaced], tally)
        new: list[tuple[_File, Note, Caller]] = []
        failed: list[_Row] = []
        for f in rest:
            row = rows.get(f.path)
            memory_id = row.memory_id if row is not None else ""
            prepared = self._prepare(f, workspaces)
            if isinstance(prepared, str):
                failed.append(f.row(memory_id, prepared))
            elif memory_id:
                updates.append(_Change(f, *prepared, memory_id))
            else:
                new.append((f, *prepared))
        tally.errors += len(failed)
        self._write_rows(touched + [r for r in failed if r != rows.get(r.path)])
        rebound = self._update(updates, tally)
        self._add(new + rebound, tally)
        if renew:
            self._store.writer.run(
                lambda tx: tx.conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (_DEFAULTS_KEY, defaults),
                )
            )
        return tally.report()

    def _defaults_taken(self) -> str | None:
        """The default kind and scope the last full pass took the notes in with."""
        row = (
            self._store.read_db.conn()
            .execute("SELECT value FROM meta WHERE key = ?", (_DEFAULTS_KEY,))
            .fetchone()
        )
        return str(row[0]) if row is not None else None

    def _name_problem(self, relative: str) -> str | None:
        max_chars = self._memories.limits.max_source_chars - len(NOTES_SOURCE)
        return name_problem(relative, max_chars)

    def _refuse_names(
        self, found: dict[str, tuple[int, int]], rows: dict[str, _Row], only: set[str] | None
    ) -> int:
        """Take the files whose path Cairn cannot record out of `found`, and keep why for
        `errors()`. A path with a row was checked when the row was written. Returns how many."""
        refused = {p: why for p in found if p not in rows and (why := self._name_problem(p))}
        for path in refused:
            del found[path]
        kept = {} if only is None else {p: w for p, w in self._refused.items() if p not in only}
        self._refused = kept | refused  # a new dict, never changed: errors() reads it anywhere
        return len(refused)

    def _changed(
        self,
        folder: Path,
        rows: dict[str, _Row],
        found: dict[str, tuple[int, int]],
        tally: _Tally,
        *,
        trust_stat: bool,
        renew: bool = False,
    ) -> tuple[list[_File], list[_Row]]:
        """The files to take in (read), and the rows of files whose stat changed but whose
        bytes did not (bookkeeping only). In a full pass a file whose stat matches its row is
        not opened; a pass for events reads the files named (an edit within one mtime tick
        that keeps the size would otherwise go unseen), and still writes only what differs."""
        changed: list[_File] = []
        touched: list[_Row] = []
        for path, (mtime_ns, size) in found.items():
            row = rows.get(path)
            current = row is not None and not row.gone
            same_stat = current and row is not None and (row.mtime_ns, row.size) == (mtime_ns, size)
            # A note that failed is tried again at each pass: its cause may be gone (the note
            # it duplicated deleted, a setting fixed) without it changing.
            if same_stat and trust_stat and row is not None and row.error is None:
                tally.unchanged += 1
                continue
            # The row keeps this stat, taken before the read: a file saved while it is read has
            # a newer stat than its row, so the next pass reads it again - no second stat needed.
            file = self._read(folder, path, mtime_ns, size)
            if (
                current
                and not renew  # the same bytes may now make another memory (new defaults)
                and row is not None
                and row.error is None
                and file.problem is None
                and file.content_hash == row.content_hash
            ):
                if not same_stat:
                    touched.append(replace(row, mtime_ns=mtime_ns, size=size))
                tally.unchanged += 1
            else:
                changed.append(file)
        return changed, touched

    # -- reading files -----------------------------------------------------------------------

    def _failing(self) -> set[str]:
        conn = self._store.read_db.conn()
        return {r[0] for r in conn.execute("SELECT path FROM notes_file WHERE error IS NOT NULL")}

    def _rows(self, only: set[str] | None) -> dict[str, _Row]:
        return _select_rows(self._store.read_db.conn(), only)

    def _read(self, folder: Path, path: str, mtime_ns: int, size: int) -> _File:
        if size > self._max_bytes:
            return _File(
                path,
                mtime_ns,
                size,
                None,
                "",
                f"the file is {size} bytes, more than a note can be (a memory's text is at "
                f"most {self._memories.limits.max_content_bytes} bytes, "
                "limits.max_content_bytes); split it into smaller notes",
            )
        try:
            with open(folder / path, "rb") as fh:
                data = fh.read(self._max_bytes + 1)
        except OSError as e:
            return _File(
                path, mtime_ns, size, None, "", f"the file cannot be read ({e.strerror})", True
            )
        return _File(path, mtime_ns, size, data, hashlib.sha256(data).hexdigest())

    def _prepare(self, f: _File, workspaces: dict[str, str]) -> tuple[Note, Caller] | str:
        """The note in a file and the caller that writes it, or why it cannot be taken in."""
        if f.problem is not None or f.data is None:
            return f.problem or "the file cannot be read"
        try:
            text = f.data.decode("utf-8")
        except UnicodeDecodeError as e:
            return (
                f"the file is not UTF-8 text (byte {e.start} cannot be decoded); save it as UTF-8"
            )
        try:
            note = parse_note(text, default_kind=self._default_kind, scope=self._default_scope)
            workspace_id = None
            if note.workspace is not None:
                workspace_id = workspaces.get(note.workspace)
                if workspace_id is None:
                    workspace_id = self._workspaces.resolve(note.workspace).id
                    workspaces[note.workspace] = workspace_id
        except CallerError as e:
            return e.message
        return note, Caller(Surface.NOTES, workspace_id=workspace_id)

    # -- writing -----------------------------------------------------------------------------

    def _archive(self, vanished: list[_Row], tally: _Tally, *, forget_rows: bool = False) -> None:
        """Files that are gone: archive their memories (never forget), keep their rows (drop
        them with `forget_rows`: rows whose path must not stay recorded)."""
        drop = [r.path for r in vanished if not r.memory_id or (forget_rows and r.gone)]
        keep = [r for r in vanished if r.memory_id and not (forget_rows and r.gone)]
        if drop:
            self._write_rows([], drop=drop)
        caller = Caller(Surface.NOTES)
        for chunk in _chunks(keep, _BATCH):

            def job(tx: WriteTx, chunk: list[_Row] = chunk) -> int:
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
                        _drop(tx, row.path)
                    else:
                        _put(tx, replace(row, mtime_ns=_GONE, size=_GONE, error=None))
                return archived

            tally.archived += self._store.writer.run(job)

    def _update(self, changes: list[_Change], tally: _Tally) -> list[tuple[_File, Note, Caller]]:
        """Bring existing memories in line with their files (moves included). Returns the files
        whose project note moved to another workspace: their old memory is archived, and they
        are written as new memories."""
        rebound: list[tuple[_File, Note, Caller]] = []
        for chunk in self._batches(changes):

            def job(tx: WriteTx, chunk: list[_Change] = chunk) -> list[str]:
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

    def _batches(self, changes: list[_Change]) -> list[list[_Change]]:
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
            holders = [m for m in held.get(_text_key(c.note, c.caller), []) if m != c.memory_id]
            if holders:
                together.update([c.memory_id, *holders])
        contested = [c for c in changes if c.memory_id in together]
        rest = [c for c in changes if c.memory_id not in together]
        return ([contested] if contested else []) + list(_chunks(rest, _BATCH))

    def _update_batch(self, tx: WriteTx, batch: list[_Change]) -> list[str]:
        """Inside a write job: `_update_one` for each change. A note may take the text another
        note of the batch holds now when that other note's change takes its memory to another
        text (two notes swapping their texts) - but only if that change lands; when one does
        not, the batch is taken back and run again with every such note refused."""
        leaving = {c.memory_id: _text_key(c.note, c.caller) for c in batch}
        passed: list[tuple[str, tuple[str, str, str]]] = []  # (holder, text) a change went past
        mark = len(tx.changes)
        with tx.db.savepoint() as batch_savepoint:
            outcomes = [self._update_one(tx, c, leaving, passed) for c in batch]
            now = self._clock.now_ms()
            if not any(_holds(tx.conn, mid, key, now) for mid, key in passed):
                return outcomes
            batch_savepoint.rollback(begin=False)
        del tx.changes[mark:]  # what the changes taken back announced did not happen
        return [self._update_one(tx, c) for c in batch]

    def _update_one(
        self,
        tx: WriteTx,
        change: _Change,
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
                _drop(tx, moved_from)
            if current is None:
                return "rebind"  # the memory was purged
            tomb = tombstones.fetch(tx.conn, current.id)
            if tomb is None or tomb.content_hash != content_hash(note.content):
                return "rebind"  # other text than the person forgot: a new note
            # The text a person forgot: left out, and that is no error (they asked for it).
            _put(tx, f.row(current.id))
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
            else _held_elsewhere(
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
                            _drop(tx, moved_from)
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
        _put(tx, f.row(current.id, error))
        if moved_from is not None:
            _drop(tx, moved_from)
        return "error" if error is not None else outcome

    def _add(self, items: list[tuple[_File, Note, Caller]], tally: _Tally) -> None:
        """New files: new memories through `write_many`, in batches per caller; each batch's
        rows are written in its transaction, so no memory is ever left without its row."""
        forgotten = self._forgotten_texts(items)
        refused: list[_Row] = []
        groups: dict[Caller, list[tuple[_File, Note]]] = {}
        for f, note, caller in items:
            by = forgotten.get(_text_key(note, caller))
            if by is not None:
                refused.append(f.row("", by))
            else:
                groups.setdefault(caller, []).append((f, note))
        if refused:
            tally.errors += len(refused)
            before = self._rows({r.path for r in refused})
            self._write_rows([r for r in refused if r != before.get(r.path)])
        adopt: list[_Change] = []
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
                landed: list[tuple[_Row | None, _Change | None]] = []

                def record(
                    tx: WriteTx,
                    results: list[WriteResult | CairnError],
                    caller: Caller = caller,
                    chunk: list[tuple[_File, Note]] = chunk,
                    landed: list[tuple[_Row | None, _Change | None]] = landed,
                ) -> None:
                    landed.clear()
                    claimed: dict[str, str] = {}  # memory id -> path, in this batch
                    for (f, note), result in zip(chunk, results, strict=True):
                        landed.append(
                            self._landed(tx.conn, f, note, caller, result, claimed=claimed)
                        )
                    rows = [row for row, _ in landed if row is not None]
                    # a note failing as before (tried again at each pass) is not written again
                    before = _select_rows(tx.conn, {r.path for r in rows if r.error is not None})
                    for row in rows:
                        if row.error is None or row != before.get(row.path):
                            _put(tx, row)

                self._memories.write_many(caller, requests, then=record)
                for row, change in landed:
                    if change is not None:
                        adopt.append(change)
                    elif row is not None and row.error is None:
                        tally.added += 1
                    else:
                        tally.errors += 1
        rebound = self._update(adopt, tally) if adopt else []
        if rebound:  # an adopted memory that was purged meanwhile: write it afresh
            self._add(rebound, tally)

    def _forgotten_texts(
        self, items: list[tuple[_File, Note, Caller]]
    ) -> dict[tuple[str, str, str], str]:
        """Which of these notes hold the text of a note whose memory was forgotten (in the same
        scope and workspace): their key -> why they are refused. A person forgot it on purpose,
        so no file brings it back (the forgotten note's own file is left out without an error)."""
        hashes = sorted({_text_key(note, caller)[0] for _, note, caller in items})
        out: dict[tuple[str, str, str], str] = {}
        conn = self._store.read_db.conn()
        for chunk, marks in in_lists(hashes):
            query = _SELECT_FORGOTTEN + " AND t.content_hash IN (" + marks + ")"
            for chash, scope, workspace, mid, by in conn.execute(query, (NOTES_SOURCE, *chunk)):
                out[(chash, scope, workspace)] = _forgotten_text(mid, by)
        return out

    def _landed(
        self,
        conn: sqlite3.Connection,
        f: _File,
        note: Note,
        caller: Caller,
        result: WriteResult | CairnError,
        *,
        claimed: dict[str, str],
    ) -> tuple[_Row | None, _Change | None]:
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
        owner = _owner(conn, mid) if holder is None else None
        if holder is None and owner is not None and not owner.gone and owner.path != f.path:
            holder = owner.path
        if holder is not None:
            return f.row("", _same_text_as(holder, mid)), None
        memory = result.memory
        ours = owner is not None or (
            memory is not None
            and memory.source == NOTES_SOURCE + f.path
            and memory.tier is Tier.HUMAN
            and memory.agent is None
        )
        if not ours:
            return f.row("", _same_text_as(None, mid)), None
        claimed[mid] = f.path
        old_path = owner.path if owner is not None else None
        counts_as = "moved" if old_path is not None and old_path != f.path else "added"
        return None, _Change(f, note, caller, mid, old_path, counts_as)

    def _write_rows(self, rows: list[_Row], *, drop: Iterable[str] = ()) -> None:
        dropped = list(drop)
        if not rows and not dropped:
            return

        def job(tx: WriteTx) -> None:
            for path in dropped:
                _drop(tx, path)
            for row in rows:
                _put(tx, row)

        self._store.writer.run(job)

    # -- what could not be taken in -------------------------------------------------------------

    def errors(self) -> list[dict[str, str]]:
        """The files that could not be taken in (their current version), with why, by path;
        `memory_id` names the memory that keeps the file's last version, if one does. A file
        holding the text of its note's forgotten memory is no error: it is left out on purpose."""
        if self._folder is None:
            return []
        rows = self._store.read_db.conn().execute(
            "SELECT n.path, n.error, CASE WHEN m.status != 'forgotten' THEN n.memory_id END "
            "FROM notes_file n LEFT JOIN memory m ON m.id = n.memory_id "
            "WHERE n.error IS NOT NULL AND n.size != -1 ORDER BY n.path"
        )
        listed = [{"path": p, "error": e} | ({"memory_id": m} if m else {}) for p, e, m in rows]
        listed += [{"path": shown(p), "error": why} for p, why in self._refused.items()]
        return sorted(listed, key=lambda e: e["path"])

    def _refresh_warning(self) -> None:
        errors = self.errors()
        if not errors:
            self._set_warning(None)
            return
        n = len(errors)
        first = errors[0]
        self._set_warning(
            f"{n} {'file' if n == 1 else 'files'} in your notes folder could not be taken in "
            f"(first: {first['path']}: {first['error']})"
        )

    def _set_warning(self, message: str | None) -> None:
        current = self._warnings.snapshot().get(WARNING)
        if current == message:
            return
        if message is None:
            self._warnings.clear(WARNING)
        else:
            self._warnings.set(WARNING, message)
        self._store.bus.publish(ChangeSet((), frozenset({Topic.HEALTH})))

    # -- watching --------------------------------------------------------------------------

    def start(self) -> None:
        """Watch the folder (recursively; editors' atomic saves arrive as moves) and run one
        full pass, on the notes folder's own thread: this returns at once. The watch starts
        before the pass reads anything, so nothing that changes during the pass is missed.
        Failures are recorded for health (site "notes"), never raised."""
        if self._folder is None or self._worker is not None or self._closed:
            return
        self._worker = threading.Thread(target=self._work, name="cairn-notes", daemon=True)
        self._worker.start()
        self._schedule((), full=True)

    def _keep_watch(self, folder: Path, *, present: bool) -> None:
        """Under the pass lock: a watch on the folder that is there now. A watch dies with its
        folder and does not follow a new one made in its place; while there is none, the
        worker runs a full pass every POLL_S instead."""
        if self._closed or self._misconfigured is not None:
            return
        if self._rewatch or not present or folder_identity(folder) != self._watched:
            self._rewatch = False
            self._stop_observer()  # a moved-away folder's events would name the wrong paths
        if not present or self._observer is not None or self._watch_failed:
            return
        try:
            self._observe(folder)
        except OSError as e:  # the inotify watch limit, permissions: a timer instead
            self._watch_failed = True
            self._failures.record(
                SITE,
                f"the notes folder cannot be watched ({e}); it is read again every "
                f"{POLL_S:.0f} s instead",
                self._clock.now_ms(),
            )
        else:
            self._watched = folder_identity(folder)

    def _watch_lost(self) -> bool:
        """Whether the worker should run a full pass though no event came: no watch, or the
        folder it watches is not the one at the path any more (moved away, unmounted)."""
        folder = self._folder
        if folder is None:
            return False
        return self._observer is None or folder_identity(folder) != self._watched

    def _stop_observer(self) -> None:
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)
            self._observer = None
        self._watched = None

    def _observe(self, folder: Path) -> None:
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileAttribEvent,
            FileClosedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
            FileSystemEvent,
            FileSystemEventHandler,
        )
        from watchdog.observers import Observer

        notes = self
        root = str(folder)

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.is_directory:  # a folder created, deleted or moved: walk everything
                    if os.fsdecode(event.src_path) == root:  # the folder itself: watch anew
                        notes._rewatch = True
                    notes._schedule((), full=True)
                    return
                raw = [event.src_path, getattr(event, "dest_path", "")]
                paths = [relative_path(root, os.fsdecode(p)) for p in raw if p]
                notes_named = [p for p in paths if p is not None and eligible(p)]
                renamed = None
                if isinstance(event, FileMovedEvent) and len(notes_named) == len(raw) == 2:
                    renamed = (notes_named[0], notes_named[1])  # a note renamed as a note
                notes._schedule(notes_named, renamed=renamed)

        observer = Observer()
        observer.schedule(
            Handler(),
            root,
            recursive=True,
            # Opens and reads (Cairn's own among them) are not changes.
            event_filter=[
                FileCreatedEvent,
                FileModifiedEvent,
                FileMovedEvent,
                FileDeletedEvent,
                FileClosedEvent,
                FileAttribEvent,
                DirCreatedEvent,
                DirDeletedEvent,
                DirMovedEvent,
            ],
        )
        observer.daemon = True
        observer.start()
        self._observer = observer

    def _schedule(
        self, paths: Iterable[str], *, full: bool = False, renamed: tuple[str, str] | None = None
    ) -> None:
        """Ask for a pass over `paths` (or a full one) once events settle; `renamed` is a note
        the watch saw renamed, (old path, new path)."""
        fresh = set(paths)
        if not fresh and not full:
            return
        now = time.monotonic()
        with self._cond:
            if not self._pending and not self._pending_full:
                self._first_event = now
            self._last_event = now
            self._pending |= fresh
            self._pending_full |= full
            if renamed is not None:
                old, new = renamed
                origin = self._renamed.pop(old, old)
                if origin != new:
                    self._renamed[new] = origin
            self._cond.notify()

    def _due_in(self) -> float | None:
        """Seconds until the pending events should be handled (None: nothing pending)."""
        if not self._pending and not self._pending_full:
            return None
        settle = self._last_event + DEBOUNCE_S
        return max(0.0, min(settle, self._first_event + MAX_DELAY_S) - time.monotonic())

    def _work(self) -> None:
        while True:
            with self._cond:
                while not (self._closed or self._halted):
                    wait = self._due_in()
                    if wait == 0.0:
                        break
                    if wait is None:
                        idle = not self._cond.wait(POLL_S)
                        if idle and not self._pending_full and self._watch_lost():
                            self._pending_full = True
                            self._first_event = self._last_event = time.monotonic() - DEBOUNCE_S
                        continue
                    self._cond.wait(wait)
                if self._closed or self._halted:
                    return
                paths, full, renamed = self._pending, self._pending_full, self._renamed
                self._pending, self._pending_full, self._renamed = set(), False, {}
            try:
                self._run_pass(None if full else paths, renamed)
            except Exception as e:
                log.exception("the notes folder pass failed")
                self._failures.record(SITE, e, self._clock.now_ms())

    def reconfigure(self, settings: Settings) -> None:
        """Follow changed `notes.*` settings while Cairn runs: stop watching the old folder (a
        pass in progress finishes first), then - when a folder is set - watch the new one and
        read it, as `start` does (the person just chose it). Turning the folder off archives
        nothing; another folder's first pass archives the memories of notes it does not have,
        as for deleted files (notes at the same paths inside it keep their memories)."""
        with self._cond:
            if self._closed:
                return
            self._halted = True
            self._cond.notify_all()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.join(30)
        with self._pass_lock:
            self._stop_observer()
            with self._cond:
                self._halted = False
                self._pending, self._pending_full, self._renamed = set(), False, {}
            self._configure(settings)
            self._watch_failed = False
            self._rewatch = False
            if self._folder is None:
                self._set_warning(None)
        self.start()

    def close(self) -> None:
        """Stop watching; wait for a pass in progress to finish."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._worker is not None:
            self._worker.join(30)
            self._worker = None
        with self._pass_lock:  # no pass can start a watch after this
            self._stop_observer()


def _pair_moves(
    changed: list[_File], vanished: dict[str, _Row], renamed: dict[str, str]
) -> tuple[list[tuple[_Row, _File]], list[_File]]:
    """A file the watch saw renamed from one that vanished, or with the very bytes of one that
    vanished in the same pass, was moved (or renamed): it keeps that file's memory (`renamed`:
    new path -> old path; a rename counts though the file was edited since). Paired rows leave
    `vanished`."""
    moves: list[tuple[_Row, _File]] = []
    unpaired: list[_File] = []
    for f in changed:
        origin = vanished.get(renamed.get(f.path, ""))
        if origin is not None and origin.memory_id:
            moves.append((origin, f))
            del vanished[origin.path]
        else:
            unpaired.append(f)
    by_hash: dict[str, _Row] = {}
    for r in vanished.values():
        if r.memory_id and r.content_hash:
            by_hash.setdefault(r.content_hash, r)
    rest: list[_File] = []
    for f in unpaired:
        origin = None
        # Also onto the path of another file (`mv b.md a.md`): the bytes came with the move.
        if f.problem is None:
            origin = by_hash.pop(f.content_hash, None)
        if origin is not None:
            moves.append((origin, f))
            del vanished[origin.path]
        else:
            rest.append(f)
    return moves, rest


def _select_rows(conn: sqlite3.Connection, only: set[str] | None) -> dict[str, _Row]:
    if only is None:
        return {r[0]: _Row(*r) for r in conn.execute(_SELECT_ROWS)}
    out: dict[str, _Row] = {}
    paths = sorted(only)
    for chunk, marks in in_lists(paths):
        query = _SELECT_ROWS + " WHERE path IN (" + marks + ")"
        out.update((r[0], _Row(*r)) for r in conn.execute(query, chunk))
    return out


def _text_key(note: Note, caller: Caller) -> tuple[str, str, str]:
    """A note's text as Cairn tells memories apart: its hash, scope and workspace."""
    workspace = caller.workspace_id if note.scope is Scope.PROJECT else None
    return content_hash(note.content), note.scope.value, workspace or ""


def _held_elsewhere(
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
    key = _text_key(note, caller)
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
            return _same_text_as(path, mid)
    query = _SELECT_FORGOTTEN + " AND t.content_hash = ? AND t.scope = ? "
    query += "AND coalesce(t.workspace_id, '') = ? AND t.memory_id != ? LIMIT 1"
    for _, _, _, mid, by in conn.execute(
        query, (NOTES_SOURCE, chash, scope, workspace, current.id)
    ):
        return _forgotten_text(mid, by)
    return None


def _same_text_as(path: str | None, memory_id: str) -> str:
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


def _forgotten_text(memory_id: str, forgotten_by: str | None) -> str:
    return (
        f"this is the text of memory {memory_id}: {who_forgot(forgotten_by)}, and Cairn does not "
        "take it in again - change the note's text, or delete the file"
    )


def _holds(conn: sqlite3.Connection, memory_id: str, key: tuple[str, str, str], now: int) -> bool:
    """Whether the note's memory `memory_id` still holds, active, the text `key` names."""
    memory = fetch_memory(conn, memory_id, now)
    if memory is None or memory.status is not Status.ACTIVE:
        return False
    held = (content_hash(memory.content), memory.scope.value, memory.workspace_id or "")
    return held == key


def _owner(conn: sqlite3.Connection, memory_id: str) -> _Row | None:
    """The row of the file whose memory this is (one that is there before one that is gone)."""
    row = conn.execute(
        _SELECT_ROWS + " WHERE memory_id = ? ORDER BY size = -1, path LIMIT 1", (memory_id,)
    ).fetchone()
    return _Row(*row) if row is not None else None


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


def _put(tx: WriteTx, row: _Row) -> None:
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


def _drop(tx: WriteTx, path: str) -> None:
    tx.conn.execute("DELETE FROM notes_file WHERE path = ?", (path,))


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


__all__ = ["Note", "NotesFolder", "SyncReport", "eligible", "parse_note"]
