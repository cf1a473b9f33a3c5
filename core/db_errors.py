"""SQLite's failures said as Cairn's errors: the one translation writes and reads share, the
damage a store has seen, and the read connection that translates every read's failure.

A busy database is `store_busy`; a full disk, a read-only file or an I/O error is `io_error`,
naming the file and what to check; a damaged file ("database disk image is malformed", "file is
not a database") is `integrity`, naming the file and the restore command. Anything else - a
syntax error, a write tried on a read-only connection - is a bug and stays untranslated, so it
shows as one.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import peewee

from core.errors import CairnError, IntegrityFailure, IOFault, StoreBusy

# SQLite's primary result codes for a damaged file and for a file that is not a database.
_DAMAGE_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_DAMAGE_WORDS = ("malformed", "file is not a database")


def translate_db_error(
    e: BaseException, *, path: Path | None = None, reading: bool = False
) -> CairnError | None:
    """Map an SQLite failure to the environment error a caller should see, or None for bugs.
    The errors it was raised while handling count too: a COMMIT that failed for a full disk is
    followed by a ROLLBACK that fails with words that say nothing.

    Args:
        e: what SQLite (or peewee over it) raised.
        path: the database file, named in the words for a damaged one.
        reading: the failure came from a read connection, where "readonly" is a bug (the read
            path tried to write), not a read-only file.
    """
    seen: set[int] = set()
    cause: BaseException | None = e
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        translated = _translate_one(cause, path, reading)
        if translated is not None:
            return translated
        cause = cause.__cause__ or cause.__context__
    return None


def is_damage(e: BaseException) -> bool:
    """Whether `e` says the database file is damaged or is not a database."""
    if not isinstance(e, peewee.DatabaseError | sqlite3.DatabaseError):
        return False
    code = getattr(e, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _DAMAGE_CODES:
        return True
    text = str(e).lower()
    return any(words in text for words in _DAMAGE_WORDS)


def damaged_message(path: Path | None, e: BaseException) -> str:
    """What a person reads when a read or a write of the store finds its file damaged."""
    where = f"the memory database {path}" if path is not None else "the memory database"
    return (
        f"{where} is damaged: SQLite says {str(e)!r}. Cairn has not changed it. Stop Cairn "
        "(`cairn stop`), keep a copy of the file, then bring back the newest backup with "
        "`cairn restore --latest`; see docs/backup-and-export.md"
    )


def _translate_one(e: BaseException, path: Path | None, reading: bool) -> CairnError | None:
    if is_damage(e):
        data = {"path": str(path)} if path is not None else None
        return IntegrityFailure(damaged_message(path, e), data=data)
    text = str(e).lower()
    if isinstance(e, peewee.OperationalError | sqlite3.OperationalError):
        if "locked" in text or "busy" in text:
            return StoreBusy("the memory store is busy (locked by another connection); retry")
        if "readonly" in text and reading:
            return None  # a read connection is read-only on purpose: the read path tried to write
        if "disk" in text or "full" in text or "i/o" in text or "readonly" in text:
            data = {"path": str(path)} if path is not None else None
            return IOFault(unusable_message(path, e, reading=reading), data=data)
    return None


def unusable_message(path: Path | None, e: BaseException, *, reading: bool) -> str:
    """What a person reads when the disk or the system refuses a read or a write of the store:
    which file, and what to check (until 2026-12-02 "the memory store could not be written:
    disk I/O error", naming neither)."""
    where = f"the memory database {path}" if path is not None else "the memory database"
    said = f"{where} could not be {'read' if reading else 'written'}: {e}"
    text = str(e).lower()
    if "full" in text:
        return f"{said}. Free some space on its disk"
    if "readonly" in text:
        return (
            f"{said}. Check that you may write the file and its folder (their permissions, "
            "and that the disk is not mounted read-only)"
        )
    return (
        f"{said}. Is its disk full, failing or removed? Check that disk, and that you may "
        f"{'read' if reading else 'write'} the file and its folder"
    )


class DamageSeen:
    """The first damage a store's reads or writes ran into, kept for as long as it is open:
    health shows it (`integrity`) even when the caller that met it said nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._message: str | None = None

    def note(self, error: CairnError) -> None:
        if isinstance(error, IntegrityFailure):
            with self._lock:
                if self._message is None:
                    self._message = error.message

    @property
    def message(self) -> str | None:
        with self._lock:
            return self._message


class ReadCursor(sqlite3.Cursor):
    """A cursor whose failures while executing or stepping are translated by its connection."""

    connection: ReadConnection

    def execute(self, sql: str, parameters: Any = (), /) -> ReadCursor:
        try:
            super().execute(sql, parameters)
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e
        return self

    def executemany(self, sql: str, seq_of_parameters: Iterable[Any], /) -> ReadCursor:
        try:
            super().executemany(sql, seq_of_parameters)
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e
        return self

    def executescript(self, sql_script: str, /) -> ReadCursor:
        try:
            super().executescript(sql_script)
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e
        return self

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e

    def fetchmany(self, size: int | None = None) -> list[Any]:
        try:
            return super().fetchmany(self.arraysize if size is None else size)
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e

    def __next__(self) -> Any:
        # A damaged page is often met while stepping through rows, not on execute.
        try:
            return super().__next__()
        except sqlite3.Error as e:
            raise self.connection.translated(e) from e


class ReadConnection(sqlite3.Connection):
    """A read connection (`sqlite3.connect(factory=ReadConnection)`) whose every statement runs
    on a `ReadCursor`. `on_error`, set by whoever opened it, turns an SQLite failure into the
    exception to raise; until it is set, failures go out as they are."""

    on_error: Callable[[sqlite3.Error], BaseException] | None = None

    def cursor(self, factory: Any = ReadCursor) -> Any:
        return super().cursor(factory)

    # sqlite3.Connection's own execute* make a plain cursor, not through `cursor()`.
    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, sql_script: str, /) -> Any:
        return self.cursor().executescript(sql_script)

    def translated(self, e: sqlite3.Error) -> BaseException:
        return e if self.on_error is None else self.on_error(e)
