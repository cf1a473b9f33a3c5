"""The memory store as one object: the lock, the write database and its writer, the readers."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from core import search_index
from core.atomic_file import reason_for
from core.changes import ChangeBus
from core.clock import Clock
from core.database import ReadDatabase, StoreLock, open_write_database, refuse_damage_on_open
from core.db_errors import DamageSeen
from core.errors import StoreUnavailable
from core.failures import BackgroundFailures
from core.paths import file_identity
from core.replaced_store import (
    FileGone,
    Kept,
    aside_name,
    keep_open_store,
    overwritten,
    set_log_aside,
)
from core.schema import Tables, bind_tables
from core.settings import Settings
from core.writer import Writer, WriteTx

log = logging.getLogger(__name__)


def _rebuild_index_if_stale(tx: WriteTx) -> None:
    """A newer tokenizer or index layout than the one that built the index: rebuild it."""
    if search_index.stale(tx.conn):
        log.info("the search index was built by another tokenizer version; rebuilding it")
        search_index.rebuild(tx.conn)


def trim_heap() -> None:
    """Return freed heap memory to the operating system (glibc's `malloc_trim`; elsewhere a
    no-op). Without it, pages SQLite hands back stay in the process's resident set."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    """libc's `malloc_trim`, looked up once (`find_library` runs `ldconfig` in a subprocess)."""
    name = ctypes.util.find_library("c")
    return None if name is None else getattr(ctypes.CDLL(name), "malloc_trim", None)


@contextlib.contextmanager
def _held_read_only(path: Path) -> Iterator[None]:
    """A read transaction on `path`, read-only, for the duration: it holds a shared lock on the
    file (whatever journal mode the header of a file copied over the store says), so a
    connection closing meanwhile cannot fold the log into it (`Store.close`), and this one,
    read-only, never does."""
    try:
        conn = sqlite3.connect(
            f"{path.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None
        )
    except sqlite3.Error as e:
        log.warning("could not hold %s while closing: %s", path, e)
        yield
        return
    try:
        conn.execute("BEGIN")
        conn.execute("PRAGMA user_version").fetchone()
    except sqlite3.Error as e:
        log.warning("could not hold %s while closing: %s", path, e)
    try:
        yield
    finally:
        conn.close()


class Store:
    """Owns one SQLite file for the life of the process.

    Writes go through `writer` (one thread, one connection); reads use `read_tables`, whose
    connections are per thread and read-only. Open with `Store.open`; close with `close`.
    """

    def __init__(
        self,
        *,
        path: Path,
        settings: Settings,
        bus: ChangeBus,
        clock: Clock,
        lock: StoreLock,
        writer: Writer,
        write_tables: Tables,
        read_db: ReadDatabase,
    ) -> None:
        self.path = path
        self.settings = settings
        self.bus = bus
        self.clock = clock
        self._lock = lock
        self.writer = writer
        self.write_tables = write_tables
        self.read_db = read_db
        self.read_tables = bind_tables(read_db)
        self._closed = False
        # Where opening set aside a write-ahead log that was not the file's (else None).
        self.log_set_aside: Path | None = None
        # The log this store writes (device, inode), so a stop moves only its own.
        self._log_identity: tuple[int, int] | None = None
        # The database file, open as long as the store: its header is looked at through it
        # (`overwritten`), and closing any descriptor of the file would drop SQLite's locks.
        self._header_fd: int | None = None

    @classmethod
    def open(
        cls,
        path: Path,
        settings: Settings,
        bus: ChangeBus,
        clock: Clock,
        *,
        lock_path: Path | None = None,
        before_migrate: Callable[[int, int], None] | None = None,
        failures: BackgroundFailures | None = None,
    ) -> Store:
        """Lock, open, check and migrate the database, then start the writer.

        Raises:
            AlreadyRunning: another process holds the store.
            IntegrityFailure, SchemaTooNew, StoreUnavailable, IOFault: see `open_write_database`.
        """
        lock = StoreLock(lock_path or path.with_name(path.name + ".lock")).acquire()
        try:
            write_db = open_write_database(
                path, settings, before_migrate=before_migrate, clock=clock
            )
        except BaseException:
            lock.release()
            raise
        write_tables = bind_tables(write_db)
        damage = DamageSeen()  # the reads' and the writes' both
        writer = Writer(write_db, write_tables, bus, failures=failures, clock=clock, damage=damage)
        read_db = ReadDatabase(path, settings, damage=damage)
        read_db.file_identity = file_identity(path)  # the file just opened, the lock held
        header_fd = os.open(path, os.O_RDONLY)  # the file just opened (`overwritten`)
        store = cls(
            path=path,
            settings=settings,
            bus=bus,
            clock=clock,
            lock=lock,
            writer=writer,
            write_tables=write_tables,
            read_db=read_db,
        )
        store.log_set_aside = write_db.log_set_aside
        store._header_fd = header_fd
        try:
            store.writer.committed_seq = store._max_audit_seq()
            store.writer.run(_rebuild_index_if_stale)
            store._log_identity = file_identity(Path(f"{path}-wal"))
        except sqlite3.DatabaseError as e:
            store.close()
            refuse_damage_on_open(path, e)
            raise StoreUnavailable(
                f"cannot open the memory database {path}: {e}. If the file is damaged, bring "
                "back the newest backup with `cairn restore --latest`",
                data={"path": str(path)},
            ) from e
        except BaseException:
            store.close()
            raise
        return store

    def overwritten(self) -> bool:
        """Whether another file was copied over the database this store serves (its header is
        not a write-ahead-logged store's any more: `replaced_store.overwritten`)."""
        fd = self._header_fd
        return fd is not None and not self._closed and overwritten(fd)

    def _max_audit_seq(self) -> int:
        row = self.read_db.conn().execute("SELECT coalesce(max(seq), 0) FROM audit").fetchone()
        return int(row[0])

    @property
    def damage(self) -> str | None:
        """What the first read or write that found the file damaged said, or None (since
        2026-12-02; health shows it as the `integrity` warning)."""
        return self.read_db.damage.message

    @property
    def committed_seq(self) -> int:
        return self.writer.committed_seq

    def seen_seq(self) -> int:
        """The last committed change a reader can see now: `committed_seq`, or later - a read
        may see a commit before the writer has counted it (it counts just after committing)."""
        counted = self.writer.committed_seq
        return max(counted, self._max_audit_seq())

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[Tables]:
        """A read transaction: every query inside sees the same committed state."""
        with self.read_db.atomic():
            yield self.read_tables

    def checkpoint(self, mode: str = "TRUNCATE") -> tuple[int, int, int]:
        """Checkpoint the WAL into the database file (run by the writer, outside a transaction)."""
        if mode not in ("PASSIVE", "FULL", "RESTART", "TRUNCATE"):
            raise ValueError(mode)

        def run(tx: Any) -> tuple[int, int, int]:
            conn: sqlite3.Connection = tx.conn
            busy, log_frames, done = conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            return int(busy), int(log_frames), int(done)

        return self.writer.run(run, transactional=False)

    def release_memory(self) -> None:
        """Hand back the page cache that a one-off pass (quick_check, the janitor, a backup)
        filled on the write connection and on this thread's read connection; the caches of the
        threads that serve searches stay warm."""
        self.writer.run(lambda tx: tx.conn.execute("PRAGMA shrink_memory"), transactional=False)
        self.read_db.conn().execute("PRAGMA shrink_memory")
        trim_heap()

    def refuse_thread(self, thread_id: int | None) -> None:
        """Make every read and write from `thread_id` raise RuntimeError (None: allow all). The
        windows' tests refuse their GUI thread, so a service call that would freeze the windows
        fails loudly instead."""
        self.read_db.refused_thread = thread_id
        self.writer.refused_thread = thread_id

    def close(self, *, gone: FileGone | None = None) -> Kept:
        """Close the store. `gone`: its file went from under it (`core/replaced_store.py`); its
        write-ahead log and index are then set aside as `cairn.db.replaced-<time>.wal` and
        `.shm` when a file sits at the path, so they are never applied to that file, and
        neither is anything written into it:

        - REPLACED (another file, or none, at the path): the store this connection still has
          open is first kept whole as `cairn.db.replaced-<time>` (a failed copy is logged).
          SQLite folds no log into a file that moved, nor removes it.
        - OVERWRITTEN (the same file, another's contents): nothing can be kept whole. A
          read-only connection holds the file while the others close, so none folds the log
          into it (the last connection to close does; a read-only one cannot).

        Done only while the store's lock file at its path is still the one this store holds
        (a folder deleted and a new Cairn serving there: its files are left alone). Returns
        what was kept."""
        if self._closed:
            return Kept()
        kept_store = kept_log = aside = None
        problems: list[str] = []
        if gone is not None and self._lock.held_at_path():
            aside = aside_name(self.path)
        if aside is not None and gone is FileGone.REPLACED:
            try:
                self.writer.run(lambda tx: keep_open_store(tx.conn, aside), transactional=False)
                kept_store = aside
            except (sqlite3.Error, OSError, StoreUnavailable) as e:
                why = reason_for(e, aside.parent) if isinstance(e, OSError) else str(e)
                problems.append(f"the store it had open could not be kept as {aside}: {why}")
                log.warning("could not keep the store %s had open: %s", self.path, problems[-1])
        with contextlib.ExitStack() as holding:
            if aside is not None and gone is FileGone.OVERWRITTEN:
                holding.enter_context(_held_read_only(self.path))
            self._closed = True
            self.writer.close()
            self.read_db.close_all()
        # Only now that no connection of this process has the file open: closing a descriptor
        # of it drops the locks they hold (`core/replaced_store.py`).
        if self._header_fd is not None:
            os.close(self._header_fd)
            self._header_fd = None
        # The store's own log, after its connections closed and before the lock goes (no Cairn
        # opens in between). With no file at the path the log stays: the next start refuses
        # that pair and says so.
        wal = Path(f"{self.path}-wal")
        if aside is not None and self.path.exists() and file_identity(wal) == self._log_identity:
            try:
                kept_log = set_log_aside(self.path, aside)
            except OSError as e:
                problems.append(
                    f"its write-ahead log {wal} could not be set aside: "
                    f"{reason_for(e, wal.parent)}; keep it, and move it away before Cairn starts "
                    "again, so it is never applied to the file at the path now"
                )
                log.warning("%s", problems[-1])
        self._lock.release()
        return Kept(kept_store, kept_log, tuple(problems))
