"""Housekeeping that runs on start and periodically: bring times after now back to now, purge
expired memories, free what gone or expired memories leave hidden (and a store from before
2026-11-30 left stranded), rotate the audit log, and the lifecycle pass (archive unused project
memories, end stale sessions, check workspaces, the daily integrity check).

Each step runs on its own: one that fails is recorded in health under `janitor.<step>` and the
others still run. Each run reports what it did; nothing here deletes a memory that has not expired.
A stop (Cairn quitting) is seen between steps and between the audit rotation's chunks: the round
ends there and the next one does the rest.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from core import agents, audit, audit_files, audit_rotation, suggestions, usage
from core.atomic_file import fsync_dir, reason_for
from core.clock import ClockWatch
from core.errors import IOFault
from core.failures import BackgroundFailures
from core.lifecycle import Lifecycle, LifecycleReport
from core.memory_service import MemoryService
from core.model import Caller
from core.paths import Paths
from core.settings import Settings
from core.store import Store
from core.writer import WriteTx

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class JanitorReport:
    purged: int
    audit_rotated: int
    lifecycle: LifecycleReport | None = None
    failed: tuple[str, ...] = ()  # the health sites of the steps that failed (`janitor.purge`)
    released: int = 0  # memories and contradictions freed from gone or expired memories
    stopped: bool = False  # a stop ended the round before all its steps ran

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"purged": self.purged, "audit_rotated": self.audit_rotated}
        if self.released:
            out["released"] = self.released
        if self.lifecycle is not None:
            out.update(self.lifecycle.to_dict())
        if self.failed:
            out["failed"] = list(self.failed)
        if self.stopped:
            out["stopped"] = True
        return out


class Janitor:
    def __init__(
        self,
        store: Store,
        memories: MemoryService,
        settings: Settings,
        paths: Paths,
        *,
        lifecycle: Lifecycle | None = None,
        failures: BackgroundFailures | None = None,
        rotation_chunk: int = audit_rotation.CHUNK_EVENTS,
        watch: ClockWatch | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        """With `failures`, a step that fails is recorded there and the round goes on; without
        (a one-off run), its error is raised. `rotation_chunk`: audit events moved per write
        transaction. With `watch`, the steps that act on time run only in a round it trusts the
        clock for (`ClockWatch.round`). Once `stop` is set, a round runs no further step and a
        rotation no further chunk: the next round carries on from there."""
        self._watch = watch
        self._lifecycle = lifecycle
        self._store = store
        self._memories = memories
        self._failures = failures
        self._max_audit = settings.integer("audit.max_events")
        self._archive = paths.audit_archive
        self._chunk = rotation_chunk
        self._stop = stop

    def _stopping(self) -> bool:
        return self._stop is not None and self._stop.is_set()

    def run(self, *, live_sessions: frozenset[str] = frozenset()) -> JanitorReport:
        """One round; `live_sessions` have an open connection (never ended)."""
        failed: list[str] = []
        # The clock (core/clock.py): purging, releasing, archiving and ending sessions act on
        # time, and wait while it reads before 2026 or in a round where it was set.
        timed = self._watch is None or self._watch.round()
        skipped: list[str] = []

        def step(name: str, work: Callable[[], T], fallback: T) -> T:
            if skipped or self._stopping():
                skipped.append(name)
                return fallback
            try:
                return work()
            except Exception as e:  # recorded in health, retried next round
                if self._failures is None:
                    raise
                site = f"janitor.{name}"
                self._failures.record(site, e, self._store.clock.now_ms())
                failed.append(site)
                return fallback

        if timed:
            step("times_after_now", self.bring_back_times, 0)
        purged = step("purge", self._memories.purge_expired, 0) if timed else 0
        released = step("release_stranded", self._memories.release_stranded, 0) if timed else 0
        rotated = step("audit_rotation", self.rotate_audit, 0)
        cycle = None
        if (lc := self._lifecycle) is not None:
            archived = step("archive_unused", lc.archive_unused, 0) if timed else 0
            ended, expiring = (
                step("end_sessions", functools.partial(lc.end_sessions, live_sessions), (0, 0))
                if timed
                else (0, 0)
            )
            missing = step("workspaces", lc.check_workspaces, 0)
            step("integrity", lc.check_integrity, None)
            cycle = LifecycleReport(archived, ended, expiring, missing)
        report = JanitorReport(purged, rotated, cycle, tuple(failed), released, bool(skipped))
        if skipped:
            log.info("janitor: stopped before %s; the next round runs them", ", ".join(skipped))
        if (
            purged
            or rotated
            or released
            or (cycle and (cycle.archived or cycle.session_memories_expiring))
        ):
            log.info("janitor: %s", report.to_dict())
        return report

    def bring_back_times(self) -> int:
        """Set Cairn's own times that are after now (`core.clock.after_now`: written while the
        clock ran ahead, then set right) to now, so they age from here: memories' last recalls,
        sessions' and agents' last sightings, waiting proposals' sightings. Run only in a round
        the clock is trusted for. Memories' revisions and audit events are history and keep
        theirs. Returns how many times it set."""
        now = self._store.clock.now_ms()

        def job(tx: WriteTx) -> dict[str, int]:
            return {
                "recalls": usage.bring_back(tx, now),
                "sessions": Lifecycle.bring_back_sessions(tx, now),
                "agents": agents.bring_back(tx, now),
                "proposals": suggestions.bring_back(tx.conn, now),
            }

        counts = self._store.writer.run(job)
        if total := sum(counts.values()):
            log.warning(
                "times after now (the clock ran ahead, or was set back) set to now: %s",
                ", ".join(f"{n} {what}" for what, n in counts.items() if n),
            )
        return total

    def rotate_audit(self) -> int:
        """Move audit events beyond `audit.max_events` into files under the state directory, a
        chunk (`audit_rotation.CHUNK_EVENTS`) per write transaction: the writer is free between
        chunks, so agents' writes wait for one chunk at most, never for the whole move. A stop
        ends it between chunks: the file holds the events moved, the table the others, and the
        file is closed (`_close_early`), so the next rotation starts one of its own. Returns how
        many events this run moved.

        Raises:
            IOFault: the files cannot be written there (the path and what is wrong); the events
                not yet moved stay in the database.
        """
        writer = self._store.writer
        rotation: audit_rotation.Rotation | None = None
        try:
            rotation = writer.run(
                lambda tx: audit_rotation.start_rotation(tx, self._max_audit, self._archive)
            )
            if rotation is None:
                return 0

            chunks: list[float] = []

            def chunk(tx: WriteTx) -> None:
                began = time.perf_counter()
                audit_rotation.rotate_chunk(tx, rotation, self._chunk)
                chunks.append(time.perf_counter() - began)
                if rotation.finished:
                    audit.record(
                        tx,
                        Caller.system(),
                        "audit_rotated",
                        detail={"events": rotation.moved, "directory": str(self._archive)},
                        at=self._store.clock.now_ms(),
                    )

            while not rotation.finished:  # at least once: an interrupted file may be whole
                # Only while events are left to move: with none, the last chunk ends the
                # rotation and records it (a pause then would leave nothing for the next round
                # to carry on, and no `audit_rotated` event).
                if rotation.done < rotation.last and self._stopping():
                    # after a chunk of this run: none of the file's events is in the table
                    closed = _close_early(rotation) if chunks else rotation.target
                    log.info(
                        "audit rotation paused by the stop: %d events moved into %s in %d write "
                        "transactions; the next round moves the rest",
                        rotation.moved,
                        closed.name,
                        len(chunks),
                    )
                    return rotation.moved
                writer.run(chunk)
        except OSError as e:
            target = rotation.target if rotation is not None else None
            raise _rotation_fault(self._archive, e, target) from e
        log.info(
            "audit rotation: %d events into %s in %d write transactions, the longest %.0f ms",
            rotation.moved,
            rotation.target.name,
            len(chunks),
            max(chunks) * 1000,
        )
        return rotation.moved


def _close_early(rotation: audit_rotation.Rotation) -> Path:
    """Rename the file of a rotation that stops before its end after the events it holds
    (`audit-<first>-<done>.jsonl`) and return where it is. Left open, the next rotation would
    carry it on - and to learn where it stopped, read the whole file twice in its first write
    transaction (3 s for 168,000 events on the two-year store, every agent's write waiting).
    Every line in it is whole and fsynced and its events left the table in committed chunks, so
    it is a finished file; renamed or not (killed before, a name taken), nothing is lost."""
    found = audit_files.span(rotation.target)
    if found is None or rotation.done < found[0]:
        return rotation.target  # nothing in it yet: the next rotation fills it
    closed = rotation.target.with_name(f"audit-{found[0]:012d}-{rotation.done:012d}.jsonl")
    if closed.exists():  # a rotated file is never replaced
        return rotation.target
    try:
        os.rename(rotation.target, closed)
    except OSError as e:
        log.warning(
            "could not close the audit file %s early (%s); the next round carries it on",
            rotation.target,
            reason_for(e, closed.parent),
        )
        return rotation.target
    # Not made durable, the file is found under its old name after a power loss: carried on.
    with contextlib.suppress(OSError):
        fsync_dir(closed.parent)
    return closed


def _rotation_fault(directory: Path, e: OSError, target: Path | None) -> IOFault:
    """What a rotation into `directory` that failed with `e` says: the folder, the file it was
    filling (`target`, or the one `e` names) and why, in words."""
    if e.errno == errno.EEXIST and not directory.is_dir():
        why = "that path is a file, not a folder; move the file away (Cairn creates the folder)"
    else:
        named = Path(os.fsdecode(e.filename)) if e.filename else None
        file = named if named is not None and named != directory else target
        why = reason_for(e, directory)
        if file is not None:
            why = f"the file {file.name} cannot be written: {why}"
    return IOFault(
        f"cannot rotate the audit log into {directory}: {why}. The events stay in the database "
        "until then",
        data={"path": str(directory)},
    )
