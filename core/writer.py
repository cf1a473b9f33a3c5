"""The one serialized writer: the single write connection, and the one path every write job takes.

Jobs queue up; the writer thread takes what is waiting (group commit), runs each job in its own
savepoint inside one transaction, commits, publishes what changed, and only then answers each
caller. A job that fails rolls back its own savepoint and nothing else; a failed commit fails
every job in it. An answered write is a committed write.

When no job is queued or in the writer thread's hands and the connection is free, `run` executes
the job on the caller's own thread instead, under the same connection lock: the writes stay
serialized, and an uncontended write is spared two thread hand-offs (about 90 us of its ~500 us
on the development machine). A caller never runs ahead of jobs the writer thread has taken:
until 2026-12-01 a caller running job after job in place (an audit rotation's chunks) could
take the freed lock again before the waiting writer thread woke, and agents' writes waited.
"""

from __future__ import annotations

import collections
import logging
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from core.changes import Change, ChangeBus, ChangeSet
from core.clock import Clock, SystemClock
from core.database import WriteDatabase, refuse_on
from core.db_errors import DamageSeen, translate_db_error
from core.errors import CairnError, IOFault, StoreUnavailable
from core.failures import BackgroundFailures

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass
class WriteTx:
    """What a write job sees: the write connection, the tables, where to record changes, hooks to
    run after the commit, and `request` to queue follow-up work on the writer (not waited for)."""

    db: WriteDatabase
    tables: Any
    request: Callable[[Callable[[WriteTx], object], str], None]
    changes: list[Change] = field(default_factory=list)
    after_commit: list[Callable[[], None]] = field(default_factory=list)
    wrote: bool = False  # set by the writer: the job changed rows

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn()


@dataclass
class _Job(Generic[T]):
    fn: Callable[[WriteTx], T]
    future: Future[T]
    transactional: bool


_STOP = object()


class Writer:
    """Runs write jobs one transaction at a time on the single write connection."""

    def __init__(
        self,
        db: WriteDatabase,
        tables: Any,
        bus: ChangeBus,
        *,
        failures: BackgroundFailures | None = None,
        clock: Clock | None = None,
        damage: DamageSeen | None = None,
        max_batch: int = 64,
    ) -> None:
        self._db = db
        self.damage = damage or DamageSeen()
        self._failures = failures or BackgroundFailures()
        self._clock = clock or SystemClock()
        self._tables = tables
        self._bus = bus
        self._max_batch = max_batch
        self._queue: collections.deque[Any] = collections.deque()
        self._cond = threading.Condition()
        self._closed = False
        self._unfinished = 0  # jobs submitted that the writer thread has not finished
        self.committed_seq = 0
        self.commits = 0
        # Why the store could not be written (a full disk, a read-only file), from the last
        # write that failed so, until one lands again: health shows it as a warning.
        self.unwritable: str | None = None
        # Whoever holds this lock owns the write connection: the writer thread, or a caller
        # running its job in place.
        self._connection = threading.Lock()
        self._owner: int | None = None
        self.refused_thread: int | None = None  # see Store.refuse_thread
        self._thread = threading.Thread(target=self._run, name="cairn-writer", daemon=True)
        self._thread.start()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    def submit(self, fn: Callable[[WriteTx], T], *, transactional: bool = True) -> Future[T]:
        """Queue a job. `transactional=False` runs it alone, outside any transaction (checkpoints,
        VACUUM); such a job must not modify rows."""
        refuse_on(self.refused_thread)
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise StoreUnavailable("the memory store is closed")
            self._queue.append(_Job(fn, future, transactional))
            self._unfinished += 1
            self._cond.notify()
        return future

    def submit_background(self, fn: Callable[[WriteTx], object], site: str) -> None:
        """Queue follow-up work nobody waits for; a failure is recorded under `site`."""

        def report(future: Future[object]) -> None:
            error = future.exception()
            if error is not None:
                self._failures.record(site, error, self._clock.now_ms())

        try:
            self.submit(fn).add_done_callback(report)
        except StoreUnavailable as e:
            self._failures.record(site, e, self._clock.now_ms())

    def run(self, fn: Callable[[WriteTx], T], *, transactional: bool = True) -> T:
        """Run a job and return its committed result (or raise its error)."""
        refuse_on(self.refused_thread)
        if self._owner == threading.get_ident() or threading.current_thread() is self._thread:
            raise RuntimeError("a write job tried to wait for another write job (deadlock)")
        if self._connection.acquire(blocking=False) and not self._ahead():
            future: Future[T] = Future()
            try:
                if self._closed:
                    raise StoreUnavailable("the memory store is closed")
                self._owner = threading.get_ident()
                job = _Job(fn, future, transactional)
                if transactional:
                    self._run_single(job)
                else:
                    self._run_alone(job)
            finally:
                self._owner = None
                self._connection.release()
            return future.result()
        return self.submit(fn, transactional=transactional).result()

    def _ahead(self) -> bool:
        """Called holding the connection: whether submitted jobs wait for it (then it is
        released, for the writer thread to run them first)."""
        with self._cond:
            if not self._unfinished:
                return False
        self._connection.release()
        return True

    def close(self) -> None:
        """Finish queued jobs, stop the thread, close the connection."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._queue.append(_STOP)
            self._cond.notify()
        self._thread.join()

    # -- the writer thread -------------------------------------------------------------------

    def _take_batch(self) -> list[Any]:
        with self._cond:
            while not self._queue:
                self._cond.wait()
            first = self._queue.popleft()
            if first is _STOP or not first.transactional:
                return [first]
            batch = [first]
            while self._queue and len(batch) < self._max_batch:
                nxt = self._queue[0]
                if nxt is _STOP or not nxt.transactional:
                    break
                batch.append(self._queue.popleft())
            return batch

    def _run(self) -> None:
        try:
            while True:
                batch = self._take_batch()
                if batch[0] is _STOP:
                    break
                with self._connection:
                    self._owner = threading.get_ident()
                    try:
                        if batch[0].transactional:
                            self._run_batch(batch)
                        else:
                            self._run_alone(batch[0])
                    finally:
                        self._owner = None
                        with self._cond:
                            self._unfinished -= len(batch)
        except BaseException:  # pragma: no cover - a bug in the writer itself
            log.exception("the writer thread failed; the store is closing")
            self._fail_pending(StoreUnavailable("the memory store's writer stopped after an error"))
            raise
        finally:
            self._fail_pending(StoreUnavailable("the memory store is closed"))
            with self._connection:
                self._db.close()

    def _fail_pending(self, error: CairnError) -> None:
        with self._cond:
            self._closed = True
            pending = [j for j in self._queue if j is not _STOP]
            self._queue.clear()
            self._unfinished -= len(pending)
        for job in pending:
            if not job.future.done():
                job.future.set_exception(error)

    def _translated(self, e: BaseException) -> BaseException:
        error = translate_db_error(e, path=Path(self._db.database))
        if error is None:
            return e
        if isinstance(error, IOFault):
            self.unwritable = error.message
        self.damage.note(error)
        return error

    def _run_alone(self, job: _Job[Any]) -> None:
        tx = WriteTx(self._db, self._tables, self.submit_background)
        try:
            result = job.fn(tx)
        except BaseException as e:
            job.future.set_exception(self._translated(e))
            return
        job.future.set_result(result)

    def _run_batch(self, batch: list[_Job[Any]]) -> None:
        if len(batch) == 1:
            self._run_single(batch[0])
            return
        outcomes: list[tuple[_Job[Any], WriteTx, Any, BaseException | None]] = []
        try:
            with self._db.atomic():
                for job in batch:
                    tx = WriteTx(self._db, self._tables, self.submit_background)
                    before = self._db.conn().total_changes
                    try:
                        with self._db.atomic():  # a savepoint: only this job rolls back on error
                            result = job.fn(tx)
                        tx.wrote = self._db.conn().total_changes != before
                    except BaseException as e:
                        outcomes.append((job, tx, None, self._translated(e)))
                    else:
                        outcomes.append((job, tx, result, None))
        except BaseException as e:  # the commit itself failed: nothing in the batch landed
            error = self._translated(e)
            for job in batch:
                if not job.future.done():
                    job.future.set_exception(error)
            return
        self._finish(outcomes)

    def _run_single(self, job: _Job[Any]) -> None:
        """One job alone: its own transaction, no savepoint (the common, uncontended case)."""
        tx = WriteTx(self._db, self._tables, self.submit_background)
        try:
            with self._db.atomic():
                before = self._db.conn().total_changes
                result = job.fn(tx)
                tx.wrote = self._db.conn().total_changes != before
        except BaseException as e:
            job.future.set_exception(self._translated(e))
            return
        self._finish([(job, tx, result, None)])

    def _finish(self, outcomes: list[tuple[_Job[Any], WriteTx, Any, BaseException | None]]) -> None:
        self.commits += 1
        if any(err is None and tx.wrote for _, tx, _, err in outcomes):
            self.unwritable = None  # rows were written: the store can be written again
        landed = [c for _, tx, _, err in outcomes if err is None for c in tx.changes]
        if landed:
            self.committed_seq = max(self.committed_seq, *(c.seq for c in landed))
            self._bus.publish(ChangeSet.of(landed))
        for job, tx, result, err in outcomes:
            if err is None:
                for hook in tx.after_commit:
                    try:
                        hook()
                    except Exception:
                        log.exception("an after-commit hook failed")
                job.future.set_result(result)
            else:
                job.future.set_exception(err)
