"""The audit ledger: one appended event per mutation, the change feed read from it, rotation.

Events name who (actor kind and name), what (action), which memory and revision, and when, under a
monotonic sequence number. They never carry query text; a short content preview is kept for the
human and scrubbed when the memory is forgotten. When the table passes `audit.max_events`, the
oldest events move to JSON-lines files in the state directory - the export format - until 90% of
the bound remain; never dropped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.atomic_file import fsync_dir
from core.changes import Change, Topic
from core.clock import refuse_before_floor
from core.model import Caller, Memory, Scope, Surface, Tier
from core.paths import make_folders
from core.wording import cut
from core.writer import WriteTx

PREVIEW_CHARS = 80


def preview(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(text.split())
    return cut(flat, PREVIEW_CHARS)


def record(
    tx: WriteTx,
    caller: Caller,
    action: str,
    *,
    memory_id: str | None = None,
    revision: int | None = None,
    content_preview: str | None = None,
    workspace_id: str | None = None,
    memory: Memory | None = None,
    detail: dict[str, Any] | None = None,
    at: int,
) -> Change:
    """Append one audit event inside the current write transaction and queue its Change.
    `memory`, when given, supplies the id, revision, workspace, scope and session.

    Raises:
        ClockWrong: a write an agent or a person asked for, stamped `at` a time before the
            clock can be trusted (`refuse_wrong_clock`); the transaction rolls back.
    """
    refuse_wrong_clock(caller, action, at)
    if memory is not None:
        memory_id = memory_id or memory.id
        revision = revision if revision is not None else memory.revision
        workspace_id = workspace_id or memory.workspace_id
        scope: str | None = memory.scope.value
        session_id = memory.session_id
    elif memory_id is not None:
        # Where the memory lives now - what `changes.since` reports for this event, so the push
        # and the catch-up agree (until 2026-11-30 an `adopt` or `resolve` was pushed with no
        # scope and reached agents through `changes.since` only).
        found = tx.conn.execute(
            "SELECT workspace_id, scope, session_id FROM memory WHERE id = ? UNION ALL "
            "SELECT workspace_id, scope, session_id FROM tombstone WHERE memory_id = ? LIMIT 1",
            (memory_id, memory_id),
        ).fetchone()
        if found is not None:
            workspace_id = workspace_id or found[0]
            scope, session_id = found[1], found[2]
        else:
            scope = session_id = None
    else:
        scope = session_id = None
    cur = tx.conn.execute(
        "INSERT INTO audit (at, actor_kind, actor, verified, action, memory_id, revision, preview,"
        " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            at,
            caller.surface.value,
            caller.actor,
            1 if caller.verified else 0,
            action,
            memory_id,
            revision,
            preview(content_preview),
            json.dumps(detail or {}, ensure_ascii=False, sort_keys=True),
        ),
    )
    seq = int(cur.lastrowid or 0)
    change = Change(
        seq=seq,
        action=action,
        topics=topics_for(action),
        memory_id=memory_id,
        revision=revision,
        workspace_id=workspace_id,
        actor=caller.actor,
        scope=scope,
        session_id=session_id,
    )
    tx.changes.append(change)
    return change


def record_many(
    tx: WriteTx,
    caller: Caller,
    action: str,
    memories: Sequence[Memory],
    *,
    at: int,
) -> None:
    """Append one audit event per memory with a single statement (the bulk-write path).

    Raises:
        ClockWrong: as `record`.
    """
    if not memories:
        return
    refuse_wrong_clock(caller, action, at)
    verified = 1 if caller.verified else 0
    actor_kind, actor = caller.surface.value, caller.actor
    details: dict[tuple[str, Scope, Tier], str] = {}  # a batch repeats a few kind/scope/tier
    rows = []
    for m in memories:
        key = (m.kind, m.scope, m.tier)
        detail = details.get(key)
        if detail is None:
            detail = details[key] = json.dumps(
                {"kind": m.kind, "scope": m.scope.value, "tier": m.tier.value}, sort_keys=True
            )
        rows.append(
            (at, actor_kind, actor, verified, action, m.id, m.revision, preview(m.content), detail)
        )
    tx.conn.executemany(
        "INSERT INTO audit (at, actor_kind, actor, verified, action, memory_id, revision, preview,"
        " detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    # The single writer makes the sequence numbers of these rows consecutive.
    last = int(tx.conn.execute("SELECT last_insert_rowid()").fetchone()[0])
    first = last - len(memories) + 1
    frozen = topics_for(action)
    tx.changes.extend(
        Change(
            seq=first + i,
            action=action,
            topics=frozen,
            memory_id=m.id,
            revision=m.revision,
            workspace_id=m.workspace_id,
            actor=actor,
            scope=m.scope.value,
            session_id=m.session_id,
        )
        for i, m in enumerate(memories)
    )


@dataclass(frozen=True)
class AuditEvent:
    seq: int
    at: int
    actor_kind: str
    actor: str
    verified: bool
    action: str
    memory_id: str | None
    revision: int | None
    preview: str | None
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "actor_kind": self.actor_kind,
            "actor": self.actor,
            "verified": self.verified,
            "action": self.action,
            "memory_id": self.memory_id,
            "revision": self.revision,
            "preview": self.preview,
            "detail": self.detail,
        }


AUDIT_COLUMNS: tuple[str, ...] = (
    "seq",
    "at",
    "actor_kind",
    "actor",
    "verified",
    "action",
    "memory_id",
    "revision",
    "preview",
    "detail",
)


def event_from_values(values: Sequence[Any]) -> AuditEvent:
    """Build an AuditEvent from a row's values in AUDIT_COLUMNS order."""
    seq, at, actor_kind, actor, verified, action, memory_id, revision, text, detail = values
    return AuditEvent(
        seq=int(seq),
        at=int(at),
        actor_kind=actor_kind,
        actor=actor,
        verified=bool(verified),
        action=action,
        memory_id=memory_id,
        revision=revision,
        preview=text,
        detail=json.loads(detail or "{}"),
    )


def event_from_row(row: Any) -> AuditEvent:
    """Build an AuditEvent from a row of the audit table's model."""
    return event_from_values([getattr(row, c) for c in AUDIT_COLUMNS])


# What a revision of a memory records as its `action` (and its audit event as the change's).
REVISION_ACTIONS = (
    "write",
    "update",
    "upsert",
    "pin",
    "unpin",
    "archive",
    "unarchive",
    "supersede",
    "unsupersede",
    "rebind",
    "expire",
    "forget",
)

# The one rule for what an agent's change feed holds, pushed (`subscriptions.visible_change`) and
# read back (`changes.since`): these memory actions, on memories in its horizon. Every other
# action - the review queue's, policy, scanner, raw reads, identity, workspaces, agents, rotation -
# is for people only (docs/protocol.md). An allow-list, so a new action stays people-only until
# it is added here. (Until 2026-11-30 `changes.since` gave agents any event naming a memory in
# their horizon - a person's `read_raw`, an `adopt`.)
AGENT_ACTIONS: frozenset[str] = frozenset(
    {*REVISION_ACTIONS, "purge", "feedback", "contradict", "resolve", "import"}
)


def agent_may_see(action: str) -> bool:
    """Whether an event of this action may reach an agent at all (its horizon decides the rest)."""
    return action in AGENT_ACTIONS


# The events of a write served (a `write=True` method of core/protocol.py), which health's
# `last_write` reads back after a restart: the memory actions, the review queue's decisions and
# proposals, policy, identity and workspace changes - by an agent, a person or an import.
WRITE_ACTIONS: frozenset[str] = AGENT_ACTIONS | {
    "propose",
    "reobserve",
    "adopt",
    "reject",
    "policy_changed",
    "identity_version",
    "workspace_moved",
    "workspace_merged",
}
WRITE_SURFACES: frozenset[str] = frozenset(
    {Surface.AGENT.value, Surface.HUMAN.value, Surface.IMPORT.value}
)

# The events of writes an agent or a person asks for (the notes folder's and imports included)
# that are refused while the clock reads before 2026 (`core.clock.FLOOR_MS`): every such write
# records one of these in its own transaction, so this is the one place they are all checked.
# Not `policy_changed` - the policy file, the truth, is written before its event, so a person's
# change is refused before the file is touched (core/policy_file.py), and a file edited by hand
# is Cairn's `system` event - nor what keeps access working: agents' tokens and statuses, a
# person's raw read.
CLOCK_CHECKED: frozenset[str] = WRITE_ACTIONS - {"policy_changed"}


def refuse_wrong_clock(caller: Caller, action: str, at: int) -> None:
    """Refuse an agent's or a person's write stamped `at` before the clock can be trusted.
    Cairn's own housekeeping (`Surface.SYSTEM`) is not refused: it must open and serve.

    Raises:
        ClockWrong: what the clock reads, that nothing was stored and what to do.
    """
    if caller.surface is not Surface.SYSTEM and action in CLOCK_CHECKED:
        refuse_before_floor(at)


_MEMORY_TOPICS = frozenset({Topic.MEMORIES, Topic.HEALTH})
_AGENT_TOPICS = frozenset({Topic.AGENTS, Topic.HEALTH})
_REVIEW_TOPICS = frozenset({Topic.REVIEW, Topic.HEALTH})
_ACTION_TOPICS: dict[str, frozenset[Topic]] = {
    "audit_rotated": frozenset({Topic.HEALTH}),
    "propose": _REVIEW_TOPICS,
    "reobserve": _REVIEW_TOPICS,
    "reject": _REVIEW_TOPICS,
    "review_evicted": _REVIEW_TOPICS,
    "adopt": frozenset({Topic.MEMORIES, Topic.REVIEW, Topic.HEALTH}),
    "policy_changed": frozenset({Topic.POLICY, Topic.HEALTH}),
    "scan_allow": frozenset({Topic.MEMORIES, Topic.HEALTH}),
    "scan_unallow": frozenset({Topic.MEMORIES, Topic.HEALTH}),
    "read_raw": frozenset({Topic.HEALTH}),
    "identity_version": frozenset({Topic.IDENTITY, Topic.HEALTH}),
    "workspace_moved": frozenset({Topic.WORKSPACES, Topic.HEALTH}),
    "workspace_merged": frozenset({Topic.WORKSPACES, Topic.MEMORIES, Topic.HEALTH}),
    "agent_add": _AGENT_TOPICS,
    "agent_active": _AGENT_TOPICS,
    "agent_paused": _AGENT_TOPICS,
    "agent_revoked": _AGENT_TOPICS,
    # an old name ending in a line break, renamed (core/old_names.py): an agent, its identity
    # document and policy section, or a kind
    "name_renamed": frozenset(
        {Topic.AGENTS, Topic.IDENTITY, Topic.MEMORIES, Topic.POLICY, Topic.HEALTH}
    ),
}


def topics_for(action: str) -> frozenset[Topic]:
    """Which topics an audited action touches (the change feed rebuilt from the audit table)."""
    return _ACTION_TOPICS.get(action, _MEMORY_TOPICS)


def scrub_previews(tx: WriteTx, memory_id: str) -> None:
    """Remove every content preview of one memory (part of `forget` and `purge`)."""
    tables = tx.tables
    tables.Audit.update(preview=None).where(tables.Audit.memory_id == memory_id).execute()


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


def table_start(conn: sqlite3.Connection) -> int:
    """The first seq of the audit table; for an empty table, the seq its next event gets."""
    first = conn.execute("SELECT min(seq) FROM audit").fetchone()[0]
    if first is not None:
        return int(first)
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'audit'").fetchone()
    return int(row[0]) + 1 if row else 1


def newest_at(conn: sqlite3.Connection) -> int | None:
    """The time of the newest event (the last written), if any."""
    row = conn.execute("SELECT at FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    return int(row[0]) if row else None


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
