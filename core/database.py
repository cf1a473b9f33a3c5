"""Opening the SQLite file: the one place pragmas are set, the process lock, checks on open.

Two peewee databases point at the same file. The write database holds exactly one connection and
is used only by the writer thread (`core.writer`). The read database gives each reading thread its
own connection with `query_only` on, so a read path that tried to write would fail loudly.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO, TypeVar

import peewee

from core.atomic_file import reason_for
from core.clock import Clock, SystemClock
from core.db_errors import DamageSeen, ReadConnection, is_damage, translate_db_error
from core.errors import AlreadyRunning, IntegrityFailure, IOFault, StoreUnavailable
from core.migrations import SchemaVersion, foreign, migrate, refuse_newer_major
from core.old_writes import repair_if_marked
from core.paths import ensure_private_dir, file_identity, free_space, make_folders
from core.replaced_store import kept_stores, set_foreign_log_aside
from core.settings import Settings

T = TypeVar("T")

Pragmas = tuple[tuple[str, object], ...]


def pragmas_for(settings: Settings, *, role: str) -> Pragmas:
    """Every pragma Cairn sets, for a `write` or a `read` connection. Nowhere else sets one."""
    common: Pragmas = (
        ("busy_timeout", settings.integer("store.busy_timeout_ms")),
        ("foreign_keys", 1),
        ("temp_store", "MEMORY"),
        ("cache_size", -16000),  # 16 MiB of page cache per connection
    )
    if role == "write":
        return (
            ("journal_mode", "WAL"),
            ("synchronous", settings.text("store.synchronous")),
            # Deleted and overwritten content is zeroed on disk, so `forget` leaves no bytes behind.
            ("secure_delete", 1),
            *common,
        )
    if role == "read":
        return (*common, ("query_only", 1))
    raise ValueError(f"unknown connection role {role!r}")


def refuse_on(thread_id: int | None) -> None:
    """Raise when the calling thread is the one refused (the windows' GUI thread)."""
    if thread_id is not None and threading.get_ident() == thread_id:
        raise RuntimeError(
            "the store was used on the GUI thread; run service calls through desktop.worker"
        )


class WriteDatabase(peewee.SqliteDatabase):
    """The single write connection. Not thread-local: the writer thread is its only user."""

    def __init__(self, path: Path, settings: Settings) -> None:
        super().__init__(
            str(path),
            pragmas=pragmas_for(settings, role="write"),
            thread_safe=False,
            check_same_thread=False,
            autoconnect=False,
            timeout=settings.integer("store.busy_timeout_ms") / 1000,
        )
        # Where opening set aside a write-ahead log that was not the file's (else None).
        self.log_set_aside: Path | None = None

    def conn(self) -> sqlite3.Connection:
        """The sqlite3 connection (peewee's `connection()` is untyped)."""
        return _conn(self)


class ReadDatabase(peewee.SqliteDatabase):
    """Per-thread read-only connections, tracked so `close_all` can close every one of them.

    Every read's SQLite failure is translated (`core/db_errors.py`): a damaged file raises
    IntegrityFailure naming it and the restore command, and is noted in `damage`; a disk I/O
    error raises IOFault; anything else (a bug) goes out as SQLite raised it."""

    def __init__(self, path: Path, settings: Settings, *, damage: DamageSeen | None = None) -> None:
        super().__init__(
            str(path),
            pragmas=pragmas_for(settings, role="read"),
            check_same_thread=False,
            timeout=settings.integer("store.busy_timeout_ms") / 1000,
            factory=ReadConnection,
        )
        self.damage = damage or DamageSeen()
        # One connection per thread id; a connection left by a finished thread is closed when its
        # id is reused, and every remaining one by close_all.
        self._opened: dict[int, sqlite3.Connection] = {}
        self._opened_lock = threading.Lock()
        self._closed = False
        self.refused_thread: int | None = None  # see Store.refuse_thread
        # The file the store opened (device, inode; see Store.open): a connection is opened only
        # while it is still the one at the path.
        self.file_identity: tuple[int, int] | None = None

    def conn(self) -> sqlite3.Connection:
        """This thread's read-only sqlite3 connection, opened on first use."""
        return _conn(self)

    def connection(self) -> Any:
        refuse_on(self.refused_thread)
        return super().connection()  # type: ignore[no-untyped-call]

    def _connect(self) -> Any:
        if self._closed:
            raise StoreUnavailable("the store is closed")
        if self.file_identity is not None and file_identity(Path(self.database)) != (
            self.file_identity
        ):
            # A connection opened on another file put at the path reads that file with this
            # store's write-ahead log, and, closing, folds the log into it and removes it: the
            # file put there and this store's last writes were both ruined (until 2026-12-01).
            raise StoreUnavailable(
                f"the memory database {self.database} was replaced or removed under this Cairn; "
                "it stops",
                data={"path": str(self.database)},
            )
        try:
            conn = super()._connect()  # type: ignore[misc]  # peewee's hook, not in its stubs
        except sqlite3.Error as e:
            raise self.translated(e) from e
        conn.on_error = self.translated
        with self._opened_lock:
            stale = self._opened.get(threading.get_ident())
            self._opened[threading.get_ident()] = conn
        if stale is not None and stale is not conn:
            with contextlib.suppress(sqlite3.Error):
                stale.close()
        return conn

    def translated(self, e: sqlite3.Error) -> BaseException:
        """What a read that failed with `e` raises; damage is noted in `damage` too."""
        error = translate_db_error(e, path=Path(self.database), reading=True)
        if error is None:
            return e
        self.damage.note(error)
        return error

    def close_all(self) -> None:
        self._closed = True
        with self._opened_lock:
            conns = list(self._opened.values())
            self._opened.clear()
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()


def _conn(db: peewee.SqliteDatabase) -> sqlite3.Connection:
    conn: sqlite3.Connection = db.connection()  # type: ignore[no-untyped-call]
    return conn


# What taking a lock someone holds fails with (flock: EWOULDBLOCK; Windows' locking: EACCES).
_HELD = frozenset({errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES, errno.EDEADLK})


class StoreLock:
    """An exclusive advisory lock on `cairn.lock`: one process owns a store at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: TextIO | None = None

    def acquire(self) -> StoreLock:
        """Take the lock or raise AlreadyRunning naming the holder's pid when it is known."""
        try:
            make_folders(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:  # a read-only or full file system, a folder that is not ours
            raise IOFault(
                f"cannot open the memory store's lock file {self.path}: "
                f"{reason_for(e, self.path.parent)}. Cairn needs to write in its data directory",
                data={"path": str(self.path)},
            ) from e
        handle = os.fdopen(fd, "r+", encoding="utf-8")
        try:
            _lock_file(handle)
        except OSError as e:
            if e.errno not in _HELD:  # no lock to be had here (a network file system's ENOLCK)
                handle.close()
                raise IOFault(
                    f"cannot lock the memory store's lock file {self.path}: "
                    f"{reason_for(e, self.path.parent)}; Cairn needs a file system that can "
                    "lock files for its data directory",
                    data={"path": str(self.path)},
                ) from e
            holder = handle.read().strip() or "unknown"
            handle.close()
            raise AlreadyRunning(
                f"the memory store {self.path.parent} is already open in another Cairn process "
                f"(pid {holder}); stop it first, or use the running Cairn",
                data={"pid": holder},
            ) from e
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
        except OSError as e:  # a full disk: said (until 2026-12-01 a traceback)
            with contextlib.suppress(OSError):
                _unlock_file(handle)
            with contextlib.suppress(OSError):
                handle.close()
            why = reason_for(e, self.path.parent)
            if e.errno != errno.ENOSPC:  # which says the free space already
                why += (
                    f". Cairn needs to write in its data directory ({free_space(self.path.parent)})"
                )
            raise IOFault(
                f"cannot write the memory store's lock file {self.path}: {why}; free some space "
                "and start Cairn again",
                data={"path": str(self.path)},
            ) from e
        self._file = handle
        return self

    def held_at_path(self) -> bool:
        """True while this lock is held and the lock file at its path is the one it holds (not
        removed, nor replaced by another Cairn's)."""
        if self._file is None:
            return False
        try:
            held, there = os.fstat(self._file.fileno()), os.lstat(self.path)
        except OSError:
            return False
        return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)

    def release(self) -> None:
        if self._file is not None:
            with contextlib.suppress(OSError):
                _unlock_file(self._file)
            self._file.close()
            self._file = None


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock_file(handle: TextIO) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)

    def _unlock_file(handle: TextIO) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock_file(handle: TextIO) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock_file(handle: TextIO) -> None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def quick_check(conn: sqlite3.Connection, path: Path) -> None:
    """Run `PRAGMA quick_check`; raise IntegrityFailure with what to do when it fails."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as e:
        raise IntegrityFailure(_damaged_message(path, str(e)), data={"path": str(path)}) from e
    problems = [r[0] for r in rows if r[0] != "ok"]
    if problems:
        raise IntegrityFailure(
            _damaged_message(path, "; ".join(problems[:5])),
            data={"path": str(path), "problems": problems[:20]},
        )


def _damaged_message(path: Path, detail: str) -> str:
    """What a person reads when opening the store finds its file damaged (while Cairn runs:
    `db_errors.damaged_message`)."""
    return (
        f"the memory database {path} is damaged ({detail}). Cairn has not changed it. Keep a "
        "copy of the file, then bring back the newest backup with `cairn restore --latest` "
        "(`cairn backup --list` shows the others); see docs/backup-and-export.md"
    )


def refuse_damage_on_open(path: Path, e: BaseException) -> None:
    """Raise IntegrityFailure when `e`, met opening the store, says its file is damaged (until
    2026-12-02 store_unavailable, naming `cairn restore` without the backup to bring back). A
    file that is no database at all may be another file put there: that stays
    store_unavailable, which says what to do if it is the store, damaged."""
    if is_damage(e) and "not a database" not in str(e).lower():
        raise IntegrityFailure(_damaged_message(path, str(e)), data={"path": str(path)}) from e


def _check_before_opening(path: Path, settings: Settings) -> Path | None:
    """Look at the database file read-only, before anything opens or creates it for writing:
    refuse a store whose contents were lost (`_refuse_lost_store`), another program's database
    (`migrations.foreign`), a store of a newer major version and, when
    `store.quick_check_on_open` is on, a damaged file. Nothing here writes to the file (the
    write connection switches it to WAL journaling, which rewrites its header), so each
    refusal's "Cairn has not changed it" is true.

    A damaged file that is sound without the write-ahead log beside it - another file's log, a
    backup put in its place by hand - gets the log set aside
    (`replaced_store.set_foreign_log_aside`) and is opened without it. Returns where the log
    went, or None.

    Raises:
        IntegrityFailure: the file is damaged (with its log, and on its own).
        IOFault: such a log could not be moved aside.
        SchemaTooNew: the file was written by a newer major version of Cairn.
        StoreUnavailable: the store's contents were lost, the path is a folder, or the file is
            another program's database.
    """
    if path.is_symlink() and not path.exists():
        raise StoreUnavailable(
            f"the memory database {path} is a link to {os.readlink(path)}, which does not "
            "exist; Cairn has not changed it. Make the link point at your database again, or "
            "remove it to start a new store",
            data={"path": str(path)},
        )
    if path.exists() and not path.is_file():
        kind = "a folder, not a database file" if path.is_dir() else "not a regular file"
        raise StoreUnavailable(
            f"the memory database {path} is {kind}; Cairn has not changed it. Move it away "
            "and start Cairn again, or bring back the newest backup with `cairn restore --latest`",
            data={"path": str(path)},
        )
    for target, what in ((path, "file"), (path.parent, "folder")):
        if target.exists() and not os.access(target, os.W_OK):
            # it opened and served, and every write - a hello included - failed (until
            # 2026-11-30)
            owner = target.stat().st_uid
            if owner != os.getuid():  # chmod is not theirs to run (until 2026-12-01 advised)
                raise StoreUnavailable(
                    f"the memory database {path} cannot be written (its {what} {target} "
                    f"belongs to uid {owner}, not to you (uid {os.getuid()}) - a Cairn run with "
                    "sudo leaves files of root's); Cairn has not changed it. Give Cairn's "
                    f"folders back to your user (`sudo chown -R {os.getuid()} {path.parent}`) "
                    "and start Cairn again",
                    data={"path": str(path)},
                )
            raise StoreUnavailable(
                f"the memory database {path} cannot be written (its {what} {target} is "
                "read-only); Cairn has not changed it. Make it writable for your user (chmod "
                "u+w, or chattr -i if it was made immutable) and start Cairn again",
                data={"path": str(path)},
            )
    if not path.exists() or path.stat().st_size == 0:
        _refuse_lost_store(path, missing=not path.exists(), unread=True)
        return None
    try:
        _check_contents(path, settings)
    except IntegrityFailure:
        kept = set_foreign_log_aside(path)
        if kept is None:
            raise
        _check_contents(path, settings)
        return kept
    return None


def _check_contents(path: Path, settings: Settings) -> None:
    """The read-only checks of `_check_before_opening` on the file with its log."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return  # not readable as a database: opening it says so
    try:
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            tables = int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])
        except sqlite3.DatabaseError as e:
            if getattr(e, "sqlite_errorcode", 0) & 0xFF == sqlite3.SQLITE_CORRUPT:
                raise IntegrityFailure(
                    _damaged_message(path, str(e)), data={"path": str(path)}
                ) from e
            return  # not a database, or not readable: opening it says so
        if not version and not tables:
            _refuse_lost_store(path, missing=False, unread=False)
        reason = foreign(conn)
        if reason is not None:
            raise StoreUnavailable(
                f"{path} is not a Cairn memory database ({reason}); Cairn has not changed it. "
                "Move it away and start Cairn again, or bring back the newest backup with "
                "`cairn restore --latest`",
                data={"path": str(path), "user_version": version},
            )
        refuse_newer_major(SchemaVersion.decode(version))
        if settings.flag("store.quick_check_on_open"):
            quick_check(conn, path)
    finally:
        conn.close()


def _refuse_lost_store(path: Path, *, missing: bool, unread: bool) -> None:
    """Refuse a database file that is missing, empty or holds nothing - no Cairn schema, no
    table - while backups of a store lie beside it: its contents were lost (a deleted
    write-ahead log: a young store keeps everything there; an emptied, deleted or moved file),
    and opening it would start a new, empty store as if nothing had happened. With no backup
    beside it, there is nothing to bring back: such a file is a new store.

    A missing or empty file beside a write-ahead log that holds data is refused in any case,
    before SQLite sees it (`unread`): opening the pair deletes the log, and the writes in it
    with it.

    A store a serving Cairn kept when its file was replaced or removed under it
    (`cairn.db.replaced-<time>`, `core/replaced_store.py`) counts as a backup, and is named
    first: a young store keeps everything in its log, so its file, copied over it, holds
    nothing, and the kept store everything."""
    wal = Path(f"{path}-wal")
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    backups = sorted((path.parent / "backups").glob("cairn-*.db"))
    folder = path.parent / "backups"
    kept = kept_stores(path)
    bring = "bring back the newest backup with `cairn restore --latest`"
    if kept:
        bring = (
            "bring back the store Cairn kept when its file was replaced, `cairn restore "
            f"{kept[-1]}`"
        )
        if backups:
            bring += ", or the newest backup with `cairn restore --latest`"
    if wal_bytes and unread:
        also = f", and the folder {folder}," if backups else ""
        files = "the log" if missing else "both"
        raise StoreUnavailable(
            f"the memory database {path} is {'missing' if missing else 'empty'}, but its "
            f"write-ahead log {wal.name} holds {wal_bytes} bytes of writes, which cannot be read "
            "without it (opening the pair would delete the log). Cairn has not changed "
            f"{'the log, nor made a new database' if missing else 'either file'}. Keep a copy of "
            f"{files}; then {bring}, or move {files}{also} away to start a new store",
            data={"path": str(path), "wal_bytes": wal_bytes},
        )
    if not backups and not kept:
        return
    if backups:
        held = "backup of a store lies" if len(backups) == 1 else "backups of a store lie"
        where = f"{len(backups)} {held} in {folder}"
        away = f"the folder {folder}" + (" and the kept stores" if kept else "")
    else:
        where = f"the store Cairn kept when its file was replaced lies beside it, {kept[-1].name}"
        away = f"{path.name}.replaced-* (the kept stores)"
    if missing:
        state = "is missing,"
        lost = "Was it deleted or moved? Cairn has not made a new one in its place"
    else:
        state = "holds nothing - no memories, no tables -"
        lost = (
            f"Its contents were lost (was {path.name}-wal deleted, or the file emptied?); "
            "Cairn has not changed it"
        )
    raise StoreUnavailable(
        f"the memory database {path} {state} but {where}. {lost}. {bring[0].upper()}{bring[1:]}, "
        f"or, to start a new store, move {away} away",
        data={"path": str(path), "backups": len(backups), "kept": [str(k) for k in kept]},
    )


def _require_wal(conn: sqlite3.Connection, path: Path) -> None:
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if str(mode).lower() != "wal":
        raise StoreUnavailable(f"could not switch {path} to WAL journaling (got {mode})")


def open_write_database(
    path: Path,
    settings: Settings,
    *,
    before_migrate: Callable[[int, int], None] | None = None,
    clock: Clock | None = None,
) -> WriteDatabase:
    """Open (creating if needed) the database file, check it, migrate it (what a migration
    records stamped with `clock`), repair what an older Cairn of this major wrote in shapes this
    one repairs (`core/old_writes.py`), and return the writer.

    Raises:
        IntegrityFailure: quick_check failed.
        SchemaTooNew: the file was written by a newer major version of Cairn.
        StoreUnavailable: the file cannot be opened (permissions, not a database).
        IOFault: a disk I/O error or a full disk (the message gives the free space).
    """
    ensure_private_dir(path.parent)
    log_set_aside = _check_before_opening(path, settings)
    created = not path.exists()
    if created:
        # Create the file owner-only before SQLite opens it; the directory is 0700 already.
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
    db = WriteDatabase(path, settings)
    try:
        db.connect()
        conn = db.conn()
        _require_wal(conn, path)
        now = (clock or SystemClock()).now_ms()
        migrate(conn, before_migrate=before_migrate, clock=clock)
        repair_if_marked(conn, now)  # what an older Cairn of this major wrote, before any serving
    except (sqlite3.DatabaseError, peewee.DatabaseError) as e:
        db.close()
        text = str(e).lower()
        if "disk i/o error" in text or "disk is full" in text:
            # Not a damaged file, most likely: until 2026-12-01 a full disk was sent to restore
            # a backup.
            raise IOFault(
                f"cannot open the memory database {path}: {e} ({free_space(path.parent)}). "
                "Cairn has not changed it. Is its disk full? Free some space and start Cairn "
                "again",
                data={"path": str(path)},
            ) from e
        refuse_damage_on_open(path, e)
        raise StoreUnavailable(
            f"cannot open the memory database {path}: {e}. If the file is damaged, bring back "
            "the newest backup with `cairn restore --latest`",
            data={"path": str(path)},
        ) from e
    except OSError as e:
        db.close()
        raise IOFault(f"cannot open the memory database {path}: {e}") from e
    except BaseException:
        db.close()
        raise
    db.log_set_aside = log_set_aside
    return db


def in_lists(values: Sequence[T]) -> Iterator[tuple[list[T], str]]:
    """`values` 400 at a time for `IN (...)` lists (under SQLite's limit on parameters), each
    with its `?, ?, ...`."""
    for start in range(0, len(values), 400):
        chunk = list(values[start : start + 400])
        yield chunk, ", ".join("?" for _ in chunk)
