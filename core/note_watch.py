"""The notes folder's watch: the watchdog observer on the folder, the events it reports gathered
until they settle (debounced, coalesced), and the worker thread that runs a pass for them."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from core.clock import Clock
from core.errors import EnvironmentFault
from core.failures import BackgroundFailures
from core.note_file import eligible, folder_identity, relative_path

log = logging.getLogger(__name__)

SITE = "notes"  # where unexpected failures are counted (BackgroundFailures)
DEBOUNCE_S = 0.2  # events settle this long before a pass...
MAX_DELAY_S = 1.0  # ...but a steady stream of events waits no longer than this
POLL_S = 30.0  # how often an idle worker checks that its watch still holds (else: a full pass)

# A pass over the paths named (None: a full pass), with the renames the watch saw, in order
# ((old path, new path)).
RunPass = Callable[[set[str] | None, list[tuple[str, str]]], object]


class NoteWatch:
    """The watch on the notes folder and its one worker thread, which runs `run_pass` once
    events settle. `folder` says which folder is watched now (None: the notes folder is off).
    The watch itself is started and stopped under the folder's pass lock (`keep`, `reset`,
    `stop_observer`), so no pass starts a watch while another stops it."""

    def __init__(
        self,
        folder: Callable[[], Path | None],
        run_pass: RunPass,
        failures: BackgroundFailures,
        clock: Clock,
    ) -> None:
        self._folder = folder
        self._run_pass = run_pass
        self._failures = failures
        self._clock = clock
        self.closed = False
        self._halted = False  # the worker is asked to stop without closing (a new folder)
        self._cond = threading.Condition()
        self._pending: set[str] = set()
        # Renames of notes the watch reported since the last pass, in order: (old, new). A
        # renamed note edited before its pass no longer has its old bytes, and one whose old
        # path holds a file again (a swap) is not gone: this is how it keeps its memory.
        self._moves: list[tuple[str, str]] = []
        self._pending_full = False
        # The last pass could not write the store (a full disk): the next idle check runs a
        # full pass, so what changed meanwhile is taken in once there is room.
        self._retry = False
        self._first_event = 0.0
        self._last_event = 0.0
        self._observer: Any = None
        self._worker: threading.Thread | None = None
        # (resolved path, device, inode) of the watched folder
        self._watched: tuple[str, int, int] | None = None
        self._watch_failed = False
        self._rewatch = False  # the folder itself was moved or deleted: its watch is stale

    @property
    def running(self) -> bool:
        """Whether the worker runs (between `start` and `close` or `halt`)."""
        return self._worker is not None

    def start(self) -> None:
        """Start the worker and ask it for a full pass (see `NotesFolder.start`)."""
        if self._worker is not None or self.closed:
            return
        self._worker = threading.Thread(target=self._work, name="cairn-notes", daemon=True)
        self._worker.start()
        self._schedule((), full=True)

    def keep(self, folder: Path, *, present: bool) -> None:
        """Under the pass lock: a watch on the folder that is there now. A watch dies with its
        folder and does not follow a new one made in its place; while there is none, the
        worker runs a full pass every POLL_S instead."""
        if self.closed:
            return
        if self._rewatch or not present or folder_identity(folder) != self._watched:
            self._rewatch = False
            self.stop_observer()  # a moved-away folder's events would name the wrong paths
        if not present or self._observer is not None or self._watch_failed:
            return
        where = folder_identity(folder)
        try:
            self._observe(Path(where[0]) if where is not None else folder)
        except OSError as e:  # the inotify watch limit, permissions: a timer instead
            self._watch_failed = True
            self._failures.record(
                SITE,
                f"the notes folder cannot be watched ({e}); it is read again every "
                f"{POLL_S:.0f} s instead",
                self._clock.now_ms(),
            )
        else:
            self._watched = where

    def _watch_lost(self) -> bool:
        """Whether the worker should run a full pass though no event came: no watch, or the
        folder it watches is not the one at the path any more (moved away, unmounted, a link
        that leads elsewhere now)."""
        folder = self._folder()
        if folder is None:
            return False
        return self._observer is None or folder_identity(folder) != self._watched

    def stop_observer(self) -> None:
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

        watch = self
        root = str(folder)

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                if event.is_directory:  # a folder created, deleted or moved: walk everything
                    if os.fsdecode(event.src_path) == root:  # the folder itself: watch anew
                        watch._rewatch = True
                    watch._schedule((), full=True)
                    return
                raw = [event.src_path, getattr(event, "dest_path", "")]
                paths = [relative_path(root, os.fsdecode(p)) for p in raw if p]
                notes_named = [p for p in paths if p is not None and eligible(p)]
                renamed = None
                if isinstance(event, FileMovedEvent) and len(notes_named) == len(raw) == 2:
                    renamed = (notes_named[0], notes_named[1])  # a note renamed as a note
                watch._schedule(notes_named, renamed=renamed)

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
                self._moves.append(renamed)
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
                while not (self.closed or self._halted):
                    wait = self._due_in()
                    if wait == 0.0:
                        break
                    if wait is None:
                        idle = not self._cond.wait(POLL_S)
                        if idle and not self._pending_full and (self._retry or self._watch_lost()):
                            self._pending_full = True
                            self._first_event = self._last_event = time.monotonic() - DEBOUNCE_S
                        continue
                    self._cond.wait(wait)
                if self.closed or self._halted:
                    return
                paths, full, moves = self._pending, self._pending_full, self._moves
                self._pending, self._pending_full, self._moves = set(), False, []
                self._retry = False
            try:
                self._run_pass(None if full else paths, moves)
            except EnvironmentFault as e:
                # Its events are taken: tried again at the next idle check (until 2026-12-01 the
                # notes changed while the disk was full waited for another edit, or a restart).
                self._failures.record(SITE, e, self._clock.now_ms())
                with self._cond:
                    self._retry = True
            except Exception as e:
                log.exception("the notes folder pass failed")
                self._failures.record(SITE, e, self._clock.now_ms())

    def halt(self) -> bool:
        """Stop the worker without closing (the folder's settings change), and wait for it: a
        pass in progress finishes first. Returns False, doing nothing, once closed."""
        with self._cond:
            if self.closed:
                return False
            self._halted = True
            self._cond.notify_all()
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.join(30)
        return True

    def reset(self) -> None:
        """Under the pass lock, after `halt`: no watch, nothing pending, ready to `start` anew."""
        self.stop_observer()
        with self._cond:
            self._halted = False
            self._pending, self._pending_full, self._moves = set(), False, []
            self._retry = False
        self._watch_failed = False
        self._rewatch = False

    def close(self) -> None:
        """Stop the worker for good and wait for it (a pass in progress finishes first); the
        observer is stopped by `stop_observer`, under the pass lock."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()
        if self._worker is not None:
            self._worker.join(30)
            self._worker = None
