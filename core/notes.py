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
memory without its row. Should the table be lost, the next pass rebuilds it: a file with no
row adopts the memory whose source names its path and that no row names (an import brings such
memories too), and updates it to the file.

A file whose path cannot be recorded (not UTF-8, a control character) gets no row: the pass
keeps why in memory for `errors()` and finds it again at every pass.

Here is the folder's state (its settings, the pass lock, the health warning); the rest is in
`core/note_file.py` (a note as its file holds it), `core/note_rows.py` (the `notes_file` rows),
`core/note_sync.py` (one pass), `core/note_writes.py` (the memory writes a pass makes),
`core/note_texts.py` (one memory per text) and `core/note_watch.py` (the watch and its worker).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

from core.changes import ChangeSet, Topic
from core.clock import Clock
from core.failures import BackgroundFailures
from core.health import Warnings
from core.memory_service import MemoryService
from core.model import Scope
from core.note_file import Note, eligible, parse_note, shown
from core.note_sync import NoteSync
from core.note_watch import NoteWatch
from core.note_writes import NoteWrites, SyncReport
from core.settings import Settings
from core.store import Store
from core.workspace import WorkspaceRegistry

log = logging.getLogger(__name__)

WARNING = "notes_folder"  # the health warning while files cannot be taken in


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
        self._store = store
        self._warnings = warnings
        self._sync = NoteSync(
            memories,
            store,
            NoteWrites(memories, store, clock),
            workspaces or WorkspaceRegistry(store),
        )
        self._folder: Path | None = None
        self._misconfigured: str | None = None
        self._configure(settings)
        self._pass_lock = threading.Lock()
        self._watch = NoteWatch(lambda: self._folder, self._run_pass, failures, clock)
        self.passes = 0  # completed passes, for tests and health

    def _configure(self, settings: Settings) -> None:
        self._sync.configure(settings.text("notes.kind"), Scope(settings.text("notes.scope")))
        raw = settings.text("notes.folder").strip()
        expanded = os.path.expanduser(raw) if raw else ""
        self._folder = None
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

    def _run_pass(
        self, only: set[str] | None, moves: list[tuple[str, str]] | None = None
    ) -> SyncReport:
        folder = self._folder
        if folder is None:
            return SyncReport()
        with self._pass_lock:
            if self._watch.closed:
                return SyncReport()
            if self._misconfigured is not None:
                self._set_warning(self._misconfigured)
                return SyncReport()
            present = folder.is_dir()
            if self._watch.running:
                self._watch.keep(folder, present=present)
            if not present:
                # An unmounted drive looks like this: keep every memory as it is.
                self._set_warning(
                    f"the notes folder {folder} does not exist or is not a folder; its notes' "
                    "memories are left as they are"
                )
                return SyncReport()
            started = time.perf_counter()
            report = self._sync.run(folder, only, moves or [])
            self._refresh_warning()
            self.passes += 1
        log.info(
            "notes pass (%s) in %.0f ms: %s",
            "full" if only is None else f"{len(only)} paths",
            (time.perf_counter() - started) * 1000,
            report.to_dict(),
        )
        return report

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
        listed += [{"path": shown(p), "error": why} for p, why in self._sync.refused.items()]
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
        if self._folder is None:
            return
        self._watch.start()

    def reconfigure(self, settings: Settings) -> None:
        """Follow changed `notes.*` settings while Cairn runs: stop watching the old folder (a
        pass in progress finishes first), then - when a folder is set - watch the new one and
        read it, as `start` does (the person just chose it). Turning the folder off archives
        nothing; another folder's first pass archives the memories of notes it does not have,
        as for deleted files (notes at the same paths inside it keep their memories)."""
        if not self._watch.halt():
            return
        with self._pass_lock:
            self._watch.reset()
            self._configure(settings)
            if self._folder is None:
                self._set_warning(None)
        self.start()

    def close(self) -> None:
        """Stop watching; wait for a pass in progress to finish."""
        self._watch.close()
        with self._pass_lock:  # no pass can start a watch after this
            self._watch.stop_observer()


__all__ = ["Note", "NotesFolder", "SyncReport", "eligible", "parse_note"]
