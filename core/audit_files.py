"""The rotated audit files on disk: their names and events, and which database's history each
belongs to - files of another history set aside, and put back when a restore is undone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.atomic_file import fsync_dir
from core.audit import AUDIT_COLUMNS, event_from_values, table_start


def rotated_files(archive_dir: Path) -> list[Path]:
    """The rotated files in the audit folder itself, oldest first: the current history's, once
    `set_aside` has moved any other one's away (an export checks each with `belongs`)."""
    if not archive_dir.is_dir():
        return []
    return sorted(archive_dir.glob("audit-*.jsonl"))


def set_aside_files(archive_dir: Path) -> list[Path]:
    """Rotated files of another history, in the `replaced-<time>/` folders `set_aside` made."""
    if not archive_dir.is_dir():
        return []
    return sorted(archive_dir.glob(f"{ASIDE_PREFIX}*/audit-*.jsonl"))


# -- files from more than one history -----------------------------------------------------------
#
# A restored (or copied-back) database numbers its audit events again from where it left off,
# so rotated files written after its backup hold other events under the same seq numbers. They
# are kept, never replaced, in a folder of their own beside the files of the current history.

ASIDE_PREFIX = "replaced-"
_ROTATED_NAME = re.compile(r"^audit-(\d+)-(\d+)\.jsonl$")
_SELECT_ONE = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit WHERE seq = ?"  # noqa: S608


@dataclass(frozen=True)
class RotatedFile:
    """What one rotated file holds, read without keeping its events (a file can hold hundreds
    of thousands): how many, the lines (from 1) that are not an event, and whether the events
    come in ascending seq order, as a rotation writes them (a repeated seq counts as in order)."""

    events: int
    unreadable: list[int]
    ascending: bool


def read_rotated(path: Path, *, growing: bool = False) -> RotatedFile:
    """Read a rotated file line by line; a damaged line is counted, never fatal. `growing`: a
    rotation may be appending to the file now, so a last line without its line break is one
    being written, not a damaged one (its event is still in the table): left out, not counted."""
    events = 0
    unreadable: list[int] = []
    last = 0
    ascending = True
    for number, event in _lines(path, growing=growing):
        if event is None:
            unreadable.append(number)
            continue
        events += 1
        ascending = ascending and event["seq"] >= last
        last = event["seq"]
    return RotatedFile(events, unreadable, ascending)


def iter_rotated(path: Path, *, growing: bool = True) -> Iterator[dict[str, Any]]:
    """The events of a rotated file, one at a time, in the file's order; damaged lines are
    skipped, and so is a last line cut short unless `growing` is False (`read_rotated`)."""
    for _, event in _lines(path, growing=growing):
        if event is not None:
            yield event


def _lines(path: Path, *, growing: bool) -> Iterator[tuple[int, dict[str, Any] | None]]:
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if growing and not raw.endswith(b"\n"):
                return
            try:
                event = json.loads(raw)
            except (ValueError, RecursionError):  # not JSON, or not UTF-8
                yield number, None
                continue
            seq = event.get("seq") if isinstance(event, dict) else None
            if isinstance(seq, int) and not isinstance(seq, bool):
                yield number, event
            else:
                yield number, None


def span(path: Path) -> tuple[int, int] | None:
    """The first and last seq a rotated file's name gives, if it has Cairn's name."""
    match = _ROTATED_NAME.fullmatch(path.name)
    return (int(match[1]), int(match[2])) if match else None


def belongs(conn: sqlite3.Connection, rotated: Path, start: int) -> bool:
    """Whether a rotated file is part of the history of the database behind `conn`, whose audit
    table starts at `start`: each of its events comes before the table, or is the table's own
    event at that seq (a rotation that committed after a reader's snapshot, or that did not
    commit). A file rotated from another database with the same seq numbers is not."""
    found = span(rotated)
    if found is not None and found[1] < start:
        return True
    for event in iter_rotated(rotated):
        if event["seq"] < start:
            continue
        row = conn.execute(_SELECT_ONE, (event["seq"],)).fetchone()
        if row is None or event | {"preview": None} != event_from_values(row).to_dict() | {
            "preview": None
        }:
            return False
    return True


def aside_folder_name() -> str:
    return ASIDE_PREFIX + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def set_aside(conn: sqlite3.Connection, archive_dir: Path, folder: str) -> list[Path]:
    """Move every rotated file that is not part of this database's history (`belongs`) into a
    new folder `archive_dir/<folder>` (`<folder>-2`, ... when taken); return where they are now.

    Raises:
        OSError: a file could not be moved (those already moved stay where they went).
    """
    start = table_start(conn)
    others = [p for p in rotated_files(archive_dir) if not belongs(conn, p, start)]
    return _move_into(archive_dir, folder, others) if others else []


def put_back(
    conn: sqlite3.Connection, archive_dir: Path, returning: Path, folder: str
) -> tuple[list[Path], list[Path]]:
    """Undoing a restore: `returning` is the folder where that restore set aside the files of
    the database now put back. Every rotated file that is not part of this database's history
    goes aside into `folder`, and so does every file whose seq numbers overlap a returning one
    (the undone store rotated it); then `returning`'s files come back and the emptied folder is
    removed. Returns (set aside, brought back).

    Raises:
        OSError: a file could not be moved (those already moved stay where they went).
    """
    back = sorted(returning.glob("audit-*.jsonl"))
    spans = [s for s in map(span, back) if s is not None]

    def overlaps(path: Path) -> bool:
        found = span(path)
        return found is not None and any(a <= found[1] and found[0] <= b for a, b in spans)

    start = table_start(conn)
    others = [p for p in rotated_files(archive_dir) if overlaps(p) or not belongs(conn, p, start)]
    aside = _move_into(archive_dir, folder, others) if others else []
    brought: list[Path] = []
    for path in back:
        target = archive_dir / path.name
        if not target.exists():  # a file without Cairn's name may still be there: never replaced
            os.rename(path, target)
            brought.append(target)
    if brought:
        fsync_dir(returning)
        fsync_dir(archive_dir)
    with contextlib.suppress(OSError):  # only when empty
        returning.rmdir()
    return aside, brought


def _move_into(archive_dir: Path, folder: str, files: list[Path]) -> list[Path]:
    target = archive_dir / folder
    n = 1
    while True:
        try:
            target.mkdir(mode=0o700)
            break
        except FileExistsError:
            n += 1
            target = archive_dir / f"{folder}-{n}"
    moved = []
    for path in files:
        os.rename(path, target / path.name)  # a new, empty folder: nothing there is replaced
        moved.append(target / path.name)
    fsync_dir(target)
    fsync_dir(archive_dir)
    return moved
