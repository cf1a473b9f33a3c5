"""One pass over the notes folder: which files changed since their rows, reading them, the notes
they hold, the moves among them, and the paths Cairn cannot record; the writes it hands to
`NoteWrites`."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import replace
from functools import partial
from pathlib import Path

from core.errors import CallerError
from core.memory_service import MemoryService
from core.model import Caller, Scope, Surface
from core.note_file import Note, name_problem, parse_note, stat_paths, walk_notes
from core.note_rows import File, Row, move_row, select_rows, write_rows
from core.note_writes import Change, NoteWrites, SyncReport, Tally
from core.ownership import NOTES_SOURCE
from core.store import Store
from core.workspace import WorkspaceRegistry

FRONT_MATTER_ALLOWANCE = 16 * 1024  # bytes a file may hold beyond the content limit
_DEFAULTS_KEY = "notes_defaults"  # in `meta`: the default kind and scope notes were taken in with


class NoteSync:
    """The passes over the notes folder, and what they keep from one pass to the next: the
    default kind and scope notes are taken in with, and the paths Cairn cannot record."""

    default_kind: str  # set by `configure`
    default_scope: Scope

    def __init__(
        self,
        memories: MemoryService,
        store: Store,
        writes: NoteWrites,
        workspaces: WorkspaceRegistry,
    ) -> None:
        self._memories = memories
        self._store = store
        self._writes = writes
        self._workspaces = workspaces
        self._max_bytes = memories.limits.max_content_bytes + FRONT_MATTER_ALLOWANCE
        # Files whose path Cairn cannot record (not UTF-8, ...): path -> why. Kept here, not in
        # notes_file - the path itself is what cannot be stored - and found again at each pass.
        self.refused: dict[str, str] = {}
        self._rows_checked = False  # whether this run looked for rows naming such a path

    def configure(self, default_kind: str, default_scope: Scope) -> None:
        """The defaults notes are taken in with (`notes.kind`, `notes.scope`), when the folder's
        settings are read; the paths refused so far are forgotten (the folder may be another)."""
        self.default_kind = default_kind
        self.default_scope = default_scope
        self.refused = {}

    def run(self, folder: Path, only: set[str] | None, moves: list[tuple[str, str]]) -> SyncReport:
        """One pass over `folder`: a full one, or one over the paths `only` names (events);
        `moves` are the renames of notes the watch saw since the last pass, in order."""
        if only is not None:  # the failing notes too: what these files did may be their cure
            only = only | self._failing() | set(self.refused)
        # A path that cannot be recorded has no row: it is never looked up (it cannot even be
        # sent to SQLite when it is not UTF-8).
        rows = self._rows(None if only is None else {p for p in only if not self._name_problem(p)})
        found = dict(walk_notes(folder)) if only is None else stat_paths(folder, only)
        tally = Tally()
        if only is None and not self._rows_checked:
            # Once a run: rows an earlier version wrote for a path it should have refused (a
            # secret in a file's name) are dropped; their memories are archived.
            self._rows_checked = True
            unrecordable = [r for r in rows.values() if self._name_problem(r.path)]
            for r in unrecordable:
                del rows[r.path]
            self._writes.archive(unrecordable, tally, forget_rows=True)
        tally.errors += self._refuse_names(found, rows, only)
        # Other defaults than the last full pass took the notes in with: every note is read
        # again (one that names no kind or scope takes the new ones), stat and bytes alike.
        defaults = f"{self.default_kind} {self.default_scope.value}"
        renew = only is None and self._defaults_taken() != defaults
        renamed = trace_moves(moves, found)
        retaken = _retaken(renamed, rows, found)
        changed, touched = self._changed(
            folder,
            {p: r for p, r in rows.items() if p not in retaken},
            found,
            tally,
            trust_stat=only is None and not renew,
            renew=renew,
        )
        vanished = {p: r for p, r in rows.items() if not r.gone and p not in found}
        paired, rest = _pair_moves(changed, vanished, renamed, retaken)
        taken = {origin.path for origin, _ in paired}  # rows a moved note took with it
        workspaces: dict[str, str] = {}
        updates: list[Change] = []
        # A note moved over another (`mv b.md a.md`): the one it replaced is gone - unless that
        # one moved away itself.
        replaced = [
            over
            for origin, f in paired
            if (over := rows.get(f.path)) is not None
            and over.path not in taken
            and not over.gone
            and over.memory_id not in ("", origin.memory_id)
        ]
        for origin, f in paired:
            prepared = self._prepare(f, workspaces)
            if isinstance(prepared, str):
                moved = f.row(origin.memory_id, prepared)
                self._store.writer.run(partial(move_row, row=moved, origin=origin))
                tally.errors += 1
            else:
                updates.append(Change(f, *prepared, origin.memory_id, origin.path, "moved"))
        # Archive before writing: a new file holding the text of one just deleted then meets
        # an archived memory, which it takes over, rather than an active one it would clash with.
        self._writes.archive([*vanished.values(), *replaced], tally)
        new: list[tuple[File, Note, Caller]] = []
        failed: list[Row] = []
        for f in rest:
            row = rows.get(f.path) if f.path not in taken else None
            memory_id = row.memory_id if row is not None else ""
            prepared = self._prepare(f, workspaces)
            if isinstance(prepared, str):
                failed.append(f.row(memory_id, prepared))
            elif memory_id:
                updates.append(Change(f, *prepared, memory_id))
            else:
                new.append((f, *prepared))
        tally.errors += len(failed)
        write_rows(self._store, touched + [r for r in failed if r != rows.get(r.path)])
        rebound = self._writes.update(updates, tally)
        self._writes.add(new, tally)
        self._writes.add(rebound, tally, by_source=False)
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
        self, found: dict[str, tuple[int, int]], rows: dict[str, Row], only: set[str] | None
    ) -> int:
        """Take the files whose path Cairn cannot record out of `found`, and keep why for
        `errors()`. A path with a row was checked when the row was written. Returns how many."""
        refused = {p: why for p in found if p not in rows and (why := self._name_problem(p))}
        for path in refused:
            del found[path]
        kept = {} if only is None else {p: w for p, w in self.refused.items() if p not in only}
        self.refused = kept | refused  # a new dict, never changed: errors() reads it anywhere
        return len(refused)

    def _changed(
        self,
        folder: Path,
        rows: dict[str, Row],
        found: dict[str, tuple[int, int]],
        tally: Tally,
        *,
        trust_stat: bool,
        renew: bool = False,
    ) -> tuple[list[File], list[Row]]:
        """The files to take in (read), and the rows of files whose stat changed but whose
        bytes did not (bookkeeping only). In a full pass a file whose stat matches its row is
        not opened; a pass for events reads the files named (an edit within one mtime tick
        that keeps the size would otherwise go unseen), and still writes only what differs."""
        changed: list[File] = []
        touched: list[Row] = []
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

    def _rows(self, only: set[str] | None) -> dict[str, Row]:
        return select_rows(self._store.read_db.conn(), only)

    def _read(self, folder: Path, path: str, mtime_ns: int, size: int) -> File:
        if size > self._max_bytes:
            return File(
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
            return File(
                path, mtime_ns, size, None, "", f"the file cannot be read ({e.strerror})", True
            )
        return File(path, mtime_ns, size, data, hashlib.sha256(data).hexdigest())

    def _prepare(self, f: File, workspaces: dict[str, str]) -> tuple[Note, Caller] | str:
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
            note = parse_note(text, default_kind=self.default_kind, scope=self.default_scope)
            workspace_id = None
            if note.workspace is not None:
                workspace_id = workspaces.get(note.workspace)
                if workspace_id is None:
                    workspace_id = self._workspaces.resolve(note.workspace).id
                    workspaces[note.workspace] = workspace_id
        except CallerError as e:
            return e.message
        return note, Caller(Surface.NOTES, workspace_id=workspace_id)


def trace_moves(moves: list[tuple[str, str]], found: Collection[str]) -> dict[str, str]:
    """Where the notes the watch saw renamed are now: new path -> the path whose note (as the
    last pass left it) the file there is. `moves` are the renames in order, (old, new); `found`
    the notes there are now. A rename and its reverse right after, both paths holding a file
    then, are one exchange (renameat2's RENAME_EXCHANGE, reported as two renames): the two
    notes swapped places. Otherwise the second rename took the note back, and the file it had
    replaced is gone."""

    def present(path: str, after: int) -> bool:
        return path in found or any(old == path for old, _ in moves[after:])

    at: dict[str, str | None] = {}  # path -> the note it holds (None: none of the last pass's)
    i = 0
    while i < len(moves):
        old, new = moves[i]
        held = at.get(old, old)
        if moves[i + 1 : i + 2] == [(new, old)] and present(old, i + 2) and present(new, i + 2):
            at[old], at[new] = at.get(new, new), held
            i += 2
            continue
        at[new], at[old] = held, None
        i += 1
    return {path: note for path, note in at.items() if note is not None and note != path}


def _retaken(
    renamed: dict[str, str], rows: dict[str, Row], found: Collection[str]
) -> dict[str, Row]:
    """The rows of notes renamed away from a path that holds a file again (a swap; a new file
    written where the note was), by path: the file there now is read as one without a row - it
    is not the note that row was kept for."""
    return {
        old: origin
        for new, old in renamed.items()
        if new in found
        and old in found
        and (origin := rows.get(old)) is not None
        and not origin.gone
        and origin.memory_id
    }


def _pair_moves(
    changed: list[File], vanished: dict[str, Row], renamed: dict[str, str], retaken: dict[str, Row]
) -> tuple[list[tuple[Row, File]], list[File]]:
    """A file the watch saw renamed from one that vanished, or from one whose path holds a file
    again (`retaken`), or with the very bytes of one that vanished in the same pass, was moved
    (or renamed): it keeps that file's memory (`renamed`: new path -> old path; a rename counts
    though the file was edited since). Paired rows leave `vanished`."""
    moves: list[tuple[Row, File]] = []
    unpaired: list[File] = []
    for f in changed:
        old = renamed.get(f.path, "")
        origin = vanished.get(old) or retaken.get(old)
        if origin is not None and origin.memory_id:
            moves.append((origin, f))
            vanished.pop(origin.path, None)
        else:
            unpaired.append(f)
    by_hash: dict[str, Row] = {}
    for r in vanished.values():
        if r.memory_id and r.content_hash:
            by_hash.setdefault(r.content_hash, r)
    rest: list[File] = []
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
