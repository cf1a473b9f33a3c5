"""Audit rotation: when the table passes `audit.max_events`, the oldest events move to JSON-lines
files in the state directory - the export format - until 90% of the bound remain; never dropped.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from core.atomic_file import fsync_dir
from core.audit import AUDIT_COLUMNS, event_from_values, table_start
from core.audit_files import aside_folder_name, iter_rotated, rotated_files, set_aside, span
from core.paths import make_folders
from core.writer import WriteTx


def low_water(max_events: int) -> int:
    """How many events a rotation leaves in the table: 90% of the bound. The headroom keeps a
    rotation's own `audit_rotated` event (and a few writes) from starting the next one, so an
    idle store rotates once and then no more."""
    return max_events - max_events // 10


# Events moved per write transaction. Measured on the two-year store (docs/performance.md), on
# 2 cores other work kept busy (load 5): a chunk of 500 held the writer 24 ms (median; 32 ms at
# most) - select, encode, append and fsync, delete - against 53 ms (95 ms) for 1,000 and 20 ms
# for 250. The 297,747 events of that store's first rotation had held it ~15 s in one.
CHUNK_EVENTS = 500


@dataclass
class Rotation:
    """One rotated file being filled: its name gives `first`-`last`, it holds the events up to
    `done`, `moved` counts the events this run deleted from the table, and `finished` says the
    file is whole and none of its events is left in the table (once that chunk commits)."""

    target: Path
    last: int
    done: int
    moved: int = 0
    finished: bool = False


def start_rotation(tx: WriteTx, max_events: int, archive_dir: Path) -> Rotation | None:
    """What the next rotation fills: a file an interrupted rotation left reaching into the table
    (finished first, whatever the bound now), else, when the table holds more than `max_events`
    events, a new empty file for the oldest of them down to `low_water(max_events)`; None when
    there is nothing to move.

    A rotated file is never replaced by other content: files of another history (a database put
    back by hand, or a file whose events differ from the table's) are set aside first
    (`set_aside`). An interrupted file keeps every whole line; a line cut short by a kill is
    dropped (its event is still in the table, as is every event after it).
    """
    make_folders(archive_dir)
    set_aside(tx.conn, archive_dir, aside_folder_name())
    start = table_start(tx.conn)
    open_files = [(s, p) for p in rotated_files(archive_dir) if (s := span(p)) and s[1] >= start]
    if open_files:
        (first, last), target = max(open_files, key=lambda sp: sp[0][1])
        _drop_cut_line(target)
        done = max((int(e["seq"]) for e in iter_rotated(target)), default=first - 1)
        return Rotation(target, last, max(done, first - 1))
    total = int(tx.conn.execute("SELECT count(*) FROM audit").fetchone()[0])
    if total <= max_events:
        return None
    excess = total - low_water(max_events)
    last = int(
        tx.conn.execute(
            "SELECT seq FROM audit ORDER BY seq LIMIT 1 OFFSET ?", (excess - 1,)
        ).fetchone()[0]
    )
    target = archive_dir / f"audit-{start:012d}-{last:012d}.jsonl"
    # exclusive: a file of this name was set aside above, or reaches into the table
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    fsync_dir(archive_dir)
    return Rotation(target, last, start - 1)


def rotate_chunk(tx: WriteTx, rotation: Rotation, limit: int = CHUNK_EVENTS) -> int:
    """Move up to `limit` more events of `rotation` into its file; return how many left the
    table. The lines are appended and fsynced before the rows are deleted in this transaction:
    killed or failed before the commit, the events are in the file and still in the table, and
    the next rotation (`start_rotation`) carries on after the last one in the file - an export
    takes each seq once."""
    rows = tx.conn.execute(
        f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit WHERE seq > ? AND seq <= ? "  # noqa: S608
        "ORDER BY seq LIMIT ?",
        (rotation.done, rotation.last, limit),
    ).fetchall()
    if rows:
        # Archived events drop their content preview: `forget` cannot reach into these files,
        # so they must never hold a memory's words.
        data = b"".join(
            json.dumps(
                event_from_values(row).to_dict() | {"preview": None},
                ensure_ascii=False,
                sort_keys=True,
            ).encode()
            + b"\n"
            for row in rows
        )
        with open(rotation.target, "ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        rotation.done = int(rows[-1][0])
    # and the events an interrupted rotation left both in the file and in the table
    gone = int(tx.conn.execute("DELETE FROM audit WHERE seq <= ?", (rotation.done,)).rowcount)
    rotation.moved += gone
    rotation.finished = len(rows) < limit
    return gone


def rotate(tx: WriteTx, max_events: int, archive_dir: Path) -> int:
    """When the table holds more than `max_events` events, move the oldest into a JSON-lines
    file, without their content previews, until `low_water(max_events)` remain - all in this one
    transaction; return how many moved. The housekeeping round (`Janitor.rotate_audit`) moves
    them a chunk per transaction instead; both write the same file."""
    rotation = start_rotation(tx, max_events, archive_dir)
    if rotation is None:
        return 0
    while not rotation.finished:
        rotate_chunk(tx, rotation)
    return rotation.moved


def _drop_cut_line(path: Path) -> None:
    """Cut a file back to its last whole line (an append killed mid-line)."""
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            step = min(end, 65536)
            fh.seek(end - step)
            block = fh.read(step)
            cut = block.rfind(b"\n")
            if cut >= 0:
                end = end - step + cut + 1
                break
            end -= step
        if end != size:
            fh.truncate(end)
            os.fsync(fh.fileno())
