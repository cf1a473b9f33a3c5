"""Writing an archive: one zip with every memory and its history, identity history, the review
queue, the audit log, the capture policy, workspaces and tombstones, all read in one read
transaction (`core/archive_format.py` holds the format; `core/archive_audit.py` reads the audit
log's rotated files for it).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import os
import sqlite3
import stat
import time
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from core import __version__, audit, audit_files, suggestions
from core.archive_audit import SHOWN, Gaps, _seq, last_of_each_seq, ranges, read_on, reading
from core.archive_format import (
    AUDIT,
    FORMAT_VERSION,
    HISTORY_SUFFIX,
    IDENTITY_DIR,
    MANIFEST,
    MEMORIES,
    MEMORIES_MD,
    POLICY,
    SUGGESTIONS,
    TOMBSTONES,
    WORKSPACES,
    Filters,
    Manifest,
    canonical,
    holds_a_manifest,
    identity_stem,
    memory_record,
)
from core.archive_records import IDENTITY_FIELDS, TOMBSTONE_FIELDS
from core.atomic_file import replacing
from core.clock import Clock, utc_minute
from core.errors import InvalidInput
from core.migrations import read_version
from core.model import Memory, Relation, Revision, Scope
from core.paths import Paths
from core.policy import POLICY_FILE
from core.records import SELECT_MEMORY, SELECT_REVISION, memory_from_row, revision_from_row
from core.relations import RELATION_COLUMNS, relation_from_row
from core.store import Store
from core.validation import control_in_path

_DateTime = tuple[int, int, int, int, int, int]
_ZIP_FIRST: _DateTime = (1980, 1, 1, 0, 0, 0)  # the earliest and latest dates a zip member holds
_ZIP_LAST: _DateTime = (2107, 12, 31, 23, 59, 58)
_SCOPE_ORDER = (Scope.GLOBAL, Scope.USER, Scope.PROJECT, Scope.SESSION)


# The memory filter as constant SQL: an empty JSON list means "every scope / every workspace";
# a memory without a workspace is never left out by the workspace filter.
_FILTER = (
    " WHERE m.status != 'forgotten'"
    " AND (json_array_length(?1) = 0 OR m.scope IN (SELECT value FROM json_each(?1)))"
    " AND (json_array_length(?2) = 0 OR m.workspace_id IS NULL"
    " OR m.workspace_id IN (SELECT value FROM json_each(?2)))"
)


_EXPORT_MEMORIES = SELECT_MEMORY + _FILTER + " ORDER BY m.created_at, m.id"
_EXPORT_REVISIONS = (
    SELECT_REVISION
    + " JOIN memory m ON m.id = r.memory_id"
    + _FILTER
    + " ORDER BY m.created_at, m.id, r.revision"
)
_EXPORT_MARKDOWN = (
    SELECT_MEMORY
    + " LEFT JOIN workspace w ON w.id = m.workspace_id"
    + _FILTER
    + " ORDER BY CASE m.scope WHEN 'global' THEN 0 WHEN 'user' THEN 1 WHEN 'project' THEN 2"
    " ELSE 3 END, coalesce(w.path, ''), coalesce(m.session_id, ''), m.kind, m.created_at, m.id"
)
_ENDS = len(RELATION_COLUMNS)  # where a relation row's ends begin


# Each relation's columns, then the scope, workspace and status of its two ends.
_RELATIONS = (
    "SELECT "  # noqa: S608 - assembled from constant column names
    + ", ".join(f"r.{c}" for c in RELATION_COLUMNS)
    + ", f.scope, f.workspace_id, f.status, t.scope, t.workspace_id, t.status"
    " FROM relation r JOIN memory f ON f.id = r.from_id JOIN memory t ON t.id = r.to_id"
    " ORDER BY r.from_id, r.kind, r.to_id"
)


_TOMBSTONES = (
    "SELECT memory_id, content_hash, scope, workspace_id, session_id, forgotten_by, "
    "forgotten_at, reason FROM tombstone ORDER BY forgotten_at, memory_id"
)
_AUDIT = f"SELECT {', '.join(audit.AUDIT_COLUMNS)} FROM audit ORDER BY seq"  # noqa: S608 - constant
_IDENTITY = (
    "SELECT doc, version, content, author_kind, author, reason, parent, created_at, content_hash "
    "FROM identity_version ORDER BY doc, version"
)


class _Member:
    """One file being written into the zip; hashes, measures and counts what passes through."""

    def __init__(self, zf: zipfile.ZipFile, name: str, when: _DateTime) -> None:
        info = zipfile.ZipInfo(name, date_time=when)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o600 << 16
        self.name = name
        self._fh: IO[bytes] = zf.open(info, "w", force_zip64=True)
        self._sha = hashlib.sha256()
        self._buffer = bytearray()  # many small records, compressed and hashed in large pieces
        self.size = 0
        self.records = 0

    def write(self, data: bytes) -> None:
        self._buffer += data
        self.size += len(data)
        if len(self._buffer) >= 1 << 20:
            self._flush()

    def _flush(self) -> None:
        self._fh.write(self._buffer)
        self._sha.update(self._buffer)
        self._buffer.clear()

    def record(self, obj: Any) -> None:
        self.write(canonical(obj))
        self.records += 1

    def close(self) -> dict[str, Any]:
        self._flush()
        self._fh.close()
        return {"sha256": self._sha.hexdigest(), "bytes": self.size}

    def abandon(self) -> None:
        """Close the member of an archive given up, whatever state it is in."""
        with contextlib.suppress(Exception):
            self._fh.close()


@dataclass
class _Tally:
    """What an export has written so far, for the manifest and for the files that follow."""

    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    records: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(
        default_factory=lambda: {
            "memories": 0,
            "forgotten_memories": 0,
            "relations": 0,
            "suggestions": 0,
            "audit_events": 0,
            "tombstones": 0,
            "workspaces": 0,
        }
    )
    by_scope: dict[str, int] = field(default_factory=dict)
    revisions: int = 0
    relations: int = 0
    identity_documents: int = 0
    identity_versions: int = 0
    memory_ids: set[str] = field(default_factory=set)
    tombstone_ids: set[str] = field(default_factory=set)
    workspaces: set[str] = field(default_factory=set)
    bound: dict[str, int] = field(default_factory=dict)  # workspace id -> memories bound to it
    not_importable: list[dict[str, Any]] = field(default_factory=list)
    audit: dict[str, Any] = field(default_factory=dict)


class Exporter:
    """Writes archives of one store."""

    def __init__(self, store: Store, clock: Clock, paths: Paths) -> None:
        self._store = store
        self._clock = clock
        self._paths = paths

    def export(self, out: Path, filters: Filters) -> Manifest:
        """Write the archive to a temporary file next to `out`, owner-only, then rename it.

        Raises:
            InvalidInput: `out` is a directory, its folder does not exist, it is one of
                Cairn's own files (or inside Cairn's folders), or it exists and is not a
                regular file holding an archive (only an earlier archive is replaced).
            FileNotWritten: the file could not be written (the step and why); no partial file
                is left.
        """
        out = Path(os.path.abspath(os.path.expanduser(out)))
        try:
            folder = out.is_dir()
        except OSError as e:  # a folder on the way the user may not enter (until 2026-12-01 a
            # traceback at the command line, an internal error from a running Cairn)
            raise InvalidInput(f"{out} cannot be checked: {e.strerror or e}") from None
        if folder:
            raise InvalidInput(f"{out} is a folder; give a file name for the archive")
        self._check_target(out)
        if not out.parent.is_dir():
            raise InvalidInput(f"the folder {out.parent} does not exist")
        created_at = self._clock.now_ms()
        with replacing(out, what="archive") as raw:
            zf = zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED)
            members: list[_Member] = []
            try:
                manifest = self._write(zf, filters, created_at, members)
            except BaseException:
                # Given up (`replacing` removes the file): the member being written and the zip
                # are closed without a word, so the first error is the one said. Closing the zip
                # with a member open raised ValueError, which hid it: "internal error" for a
                # file that could not be read, or a disk that filled (until 2026-12-01).
                for m in members:
                    m.abandon()
                with contextlib.suppress(Exception):
                    zf.close()
                raise
            zf.close()
            return manifest

    def _check_target(self, out: Path) -> None:
        """Refuse to put an archive where it would replace something that is not one."""
        real = Path(os.path.realpath(out))
        paths = self._paths
        for folder in (paths.data, paths.config, paths.state, paths.runtime):
            home = Path(os.path.realpath(folder))
            if real == home or home in real.parents:
                raise InvalidInput(
                    f"{out} is inside Cairn's own folder {folder} (the database, backups, "
                    "settings); give a file name outside it"
                )
        try:
            found = out.stat()
        except FileNotFoundError:
            return
        except OSError as e:
            raise InvalidInput(f"{out} cannot be checked: {e.strerror or e}") from None
        if not stat.S_ISREG(found.st_mode):
            raise InvalidInput(f"{out} exists and is not a regular file; give a new file name")
        if found.st_size and not holds_a_manifest(out):
            raise InvalidInput(
                f"{out} exists and is not a Cairn archive; give a new file name (only an earlier "
                "archive is replaced - a .docx, a .jar or another zip never is)"
            )

    def _write(
        self, zf: zipfile.ZipFile, filters: Filters, created_at: int, members: list[_Member]
    ) -> Manifest:
        """Write every file into `zf`; each member opened is added to `members`."""
        when = _zip_date(created_at)
        tally = _Tally()

        def member(name: str) -> _Member:
            members.append(_Member(zf, name, when))
            return members[-1]

        with self._store.read_db.atomic():  # one snapshot for every file
            conn = self._store.read_db.conn()
            schema = str(read_version(conn))
            paths = {str(r[0]): str(r[1]) for r in conn.execute("SELECT id, path FROM workspace")}
            self._memories(member(MEMORIES), conn, filters, tally)
            self._markdown(member(MEMORIES_MD), conn, filters, paths, tally)
            self._identity(member, conn, tally)
            self._suggestions(member(SUGGESTIONS), conn, filters, tally)
            self._tombstones(member(TOMBSTONES), conn, filters, tally)
            self._audit(member(AUDIT), conn, filters, tally)
            self._workspaces(member(WORKSPACES), conn, filters, tally)
        policy = self._paths.config / POLICY_FILE
        if policy.is_file():
            m = member(POLICY)
            with reading(policy, "the policy file"), open(policy, "rb") as fh:
                while piece := fh.read(1 << 20):  # in pieces: whatever its size, never held whole
                    m.write(piece)
            tally.files[POLICY] = m.close()
        manifest = Manifest(
            format_version=FORMAT_VERSION,
            created_at=created_at,
            cairn_version=__version__,
            schema_version=schema,
            filters={
                "scopes": sorted(s.value for s in filters.scopes),
                "workspaces": [
                    {"id": w, "path": paths.get(w)} for w in sorted(filters.workspace_ids)
                ],
            },
            left_out=dict(tally.left_out),
            counts={
                "files": dict(sorted(tally.records.items())),
                "memories": sum(tally.by_scope.values()),
                "memories_by_scope": {
                    s.value: tally.by_scope.get(s.value, 0) for s in _SCOPE_ORDER
                },
                "revisions": tally.revisions,
                "relations": tally.relations,
                "identity_documents": tally.identity_documents,
                "identity_versions": tally.identity_versions,
            },
            files=dict(sorted(tally.files.items())),
            audit=tally.audit,
            workspaces_not_importable=tuple(tally.not_importable),
        )
        info = zipfile.ZipInfo(MANIFEST, date_time=when)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o600 << 16
        text = json.dumps(manifest.to_dict(), ensure_ascii=False, sort_keys=True, indent=2)
        zf.writestr(info, text + "\n")
        return manifest

    # -- the files ---------------------------------------------------------------------------

    def _memories(
        self, out: _Member, conn: sqlite3.Connection, filters: Filters, tally: _Tally
    ) -> None:
        params = filters.params()
        now = self._clock.now_ms()
        links: dict[str, list[Relation]] = {}
        for row in conn.execute(_RELATIONS):
            from_scope, from_ws, from_status, to_scope, to_ws, to_status = row[_ENDS:]
            if from_status == "forgotten" or not filters.admits(from_scope, from_ws):
                continue  # not this archive's memory: its relations are not counted here
            if to_status == "forgotten" or not filters.admits(to_scope, to_ws):
                tally.left_out["relations"] += 1
                continue
            link = relation_from_row(row)
            links.setdefault(link.from_id, []).append(link)
        revisions = _Revisions(
            revision_from_row(r) for r in conn.execute(_EXPORT_REVISIONS, params)
        )
        for row in conn.execute(_EXPORT_MEMORIES, params):
            memory = memory_from_row(row, now)
            history = revisions.take(memory.id)
            own_links = links.get(memory.id, [])
            out.record(memory_record(memory, history, own_links))
            tally.by_scope[memory.scope.value] = tally.by_scope.get(memory.scope.value, 0) + 1
            tally.revisions += len(history)
            tally.relations += len(own_links)
            tally.memory_ids.add(memory.id)
            tally.workspaces.update(
                w for w in (memory.workspace_id, *(r.workspace_id for r in history)) if w
            )
            if memory.workspace_id:
                tally.bound[memory.workspace_id] = tally.bound.get(memory.workspace_id, 0) + 1
        total, forgotten = conn.execute(
            "SELECT count(*), coalesce(sum(status = 'forgotten'), 0) FROM memory"
        ).fetchone()
        tally.left_out["forgotten_memories"] = int(forgotten)
        tally.left_out["memories"] = int(total) - int(forgotten) - len(tally.memory_ids)
        tally.records[MEMORIES] = out.records
        tally.files[MEMORIES] = out.close()

    def _markdown(
        self,
        out: _Member,
        conn: sqlite3.Connection,
        filters: Filters,
        paths: Mapping[str, str],
        tally: _Tally,
    ) -> None:
        now = self._clock.now_ms()
        out.write(
            b"# Cairn memories\n\nEvery memory in this archive as it stands now, by scope, "
            b"workspace and kind. The full history of each is in memories.jsonl.\n"
        )
        section: tuple[str, str | None, str | None] | None = None
        kind: str | None = None
        for row in conn.execute(_EXPORT_MARKDOWN, filters.params()):
            m = memory_from_row(row, now)
            here = (m.scope.value, m.workspace_id, m.session_id)
            if here != section:
                section, kind = here, None
                out.write(f"\n## {_heading(m, paths)}\n".encode())
            if m.kind != kind:
                kind = m.kind
                out.write(f"\n### {kind}\n".encode())
            out.write(_render(m).encode("utf-8"))
            out.records += 1
        if section is None:
            out.write(b"\nNo memories.\n")
        tally.files[MEMORIES_MD] = out.close()

    def _identity(
        self, member: Callable[[str], _Member], conn: sqlite3.Connection, tally: _Tally
    ) -> None:
        docs: dict[str, list[dict[str, Any]]] = {}
        for row in conn.execute(_IDENTITY):
            docs.setdefault(row[0], []).append(dict(zip(IDENTITY_FIELDS, row, strict=True)))
        for doc, versions in docs.items():
            stem = IDENTITY_DIR + identity_stem(doc)
            history = member(stem + HISTORY_SUFFIX)
            for v in versions:
                history.record(v)
            tally.records[history.name] = history.records
            tally.files[history.name] = history.close()
            current = member(stem + ".md")
            current.write(str(versions[-1]["content"]).encode("utf-8"))
            tally.files[current.name] = current.close()
            tally.identity_documents += 1
            tally.identity_versions += len(versions)

    def _suggestions(
        self, out: _Member, conn: sqlite3.Connection, filters: Filters, tally: _Tally
    ) -> None:
        for row in conn.execute(suggestions.SELECT + " ORDER BY first_seen, id"):
            s = suggestions.from_row(row)
            if filters.active and not (
                filters.admits(s.scope.value, s.workspace_id)
                if s.scope is not None
                else s.target_id in tally.memory_ids
            ):
                tally.left_out["suggestions"] += 1
                continue
            record = s.to_dict()
            del record["rejected_before"]  # read from this store's decisions, not the proposal
            out.record(record)
            if s.workspace_id:
                tally.workspaces.add(s.workspace_id)
        tally.records[SUGGESTIONS] = out.records
        tally.files[SUGGESTIONS] = out.close()

    def _tombstones(
        self, out: _Member, conn: sqlite3.Connection, filters: Filters, tally: _Tally
    ) -> None:
        for row in conn.execute(_TOMBSTONES):
            record = dict(zip(TOMBSTONE_FIELDS, row, strict=True))
            if not filters.admits(record["scope"], record["workspace_id"]):
                tally.left_out["tombstones"] += 1
                continue
            out.record(record)
            tally.tombstone_ids.add(record["memory_id"])
            if record["workspace_id"]:
                tally.workspaces.add(record["workspace_id"])
        tally.records[TOMBSTONES] = out.records
        tally.files[TOMBSTONES] = out.close()

    def _audit(
        self, out: _Member, conn: sqlite3.Connection, filters: Filters, tally: _Tally
    ) -> None:
        """The rotated files of this database's history first (older), then the table; an event
        both in a file and still in the table (a rotation committing while this runs) is written
        once. What the log cannot hold is said in the manifest's `audit`: lines of rotated files
        that could not be read, seq numbers in no file and not in the table, and files of
        another history (a replaced database's, numbered with the same seqs) left out."""
        archive_dir = self._paths.audit_archive
        start = audit.table_start(conn)
        sources: list[Iterator[dict[str, Any]]] = []
        unreadable: list[dict[str, Any]] = []
        other: list[Path] = []
        for path in audit_files.rotated_files(archive_dir):
            with reading(path, "the rotated audit file"):
                if not audit_files.belongs(conn, path, start):
                    other.append(path)
                    continue
                # A file reaching into the table may be the one a rotation is appending to now.
                growing = (audit_files.span(path) or (0, 0))[1] >= start
                found = audit_files.read_rotated(path, growing=growing)
            if found.unreadable:
                lines = ranges(found.unreadable)
                unreadable.append(
                    {"file": path.name, "count": len(found.unreadable), "lines": lines[:SHOWN]}
                )
            events = read_on(path, audit_files.iter_rotated(path, growing=growing))
            # read twice rather than held: a two-year store's files hold ~400k events
            sources.append(events if found.ascending else iter(sorted(events, key=_seq)))
        other.extend(audit_files.set_aside_files(archive_dir))

        def keep(event: Mapping[str, Any]) -> bool:
            mid = event.get("memory_id")
            return (
                not filters.active
                or mid is None
                or mid in tally.memory_ids
                or mid in tally.tombstone_ids
            )

        gaps = Gaps()
        rotated = (e for e in heapq.merge(*sources, key=_seq) if e["seq"] < start)
        for event in last_of_each_seq(rotated):
            gaps.see(event["seq"])
            if keep(event):
                out.record(event)
            else:
                tally.left_out["audit_events"] += 1
        for row in conn.execute(_AUDIT):
            event = audit.event_from_values(row).to_dict()
            gaps.see(event["seq"])
            if keep(event):
                out.record(event)
            else:
                tally.left_out["audit_events"] += 1
        tally.records[AUDIT] = out.records
        tally.files[AUDIT] = out.close()
        tally.audit = {
            "unreadable_lines": unreadable,
            "missing_seqs": {"count": gaps.count, "ranges": gaps.runs},
            "other_history": [
                {
                    "file": p.relative_to(archive_dir).as_posix(),
                    "events": audit_files.read_rotated(p).events,
                }
                for p in other
            ],
        }

    def _workspaces(
        self, out: _Member, conn: sqlite3.Connection, filters: Filters, tally: _Tally
    ) -> None:
        for wid, path, created_at in conn.execute(
            "SELECT id, path, created_at FROM workspace ORDER BY path"
        ):
            if filters.active and wid not in tally.workspaces:
                tally.left_out["workspaces"] += 1
                continue
            out.record({"id": wid, "path": path, "created_at": int(created_at)})
            if control_in_path(path) is not None:
                tally.not_importable.append(
                    {"id": wid, "path": path, "memories": tally.bound.get(wid, 0)}
                )
        tally.records[WORKSPACES] = out.records
        tally.files[WORKSPACES] = out.close()


def _zip_date(ms: int) -> _DateTime:
    """The local time `ms` as a zip member's date, held within what a zip can date (1980 to
    2107): a clock that reads 1970 (a dead clock battery) made zipfile raise, and the export
    with it (until 2026-12-01). The manifest keeps the clock's reading."""
    t = time.localtime(ms / 1000)
    when = (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)
    return min(max(when, _ZIP_FIRST), _ZIP_LAST)


def _heading(m: Memory, paths: Mapping[str, str]) -> str:
    where = paths.get(m.workspace_id or "", m.workspace_id or "")
    if m.scope is Scope.PROJECT:
        return f"Project {where}"
    if m.scope is Scope.SESSION:
        return f"Session {m.session_id}" + (f" ({where})" if where else "")
    return m.scope.value.capitalize()


def _render(m: Memory) -> str:
    status = "expired" if m.expired else m.status.value  # an expired one is not live
    facts = [f"r{m.revision}", status, m.tier.value, f"importance {m.importance}"]
    if m.expires_at is not None:
        facts.append(f"{'expired' if m.expired else 'expires'} {utc_minute(m.expires_at)}")
    if m.pinned:
        facts.append("pinned")
    if m.tags:
        facts.append("tags: " + ", ".join(m.tags))
    if m.agent:
        facts.append(f"by {m.agent}")
    if m.superseded_by:
        facts.append(f"superseded by {m.superseded_by}")
    lines = [f"\n- `{m.id}` - {' · '.join(facts)}\n"]
    if m.summary:
        lines.append(f"  *{' '.join(m.summary.split())}*\n")
    lines.append("\n")
    lines.extend(f"  > {line}".rstrip() + "\n" for line in m.content.splitlines() or [""])
    return "".join(lines)


class _Revisions:
    """Revisions in the same order as the memories they belong to, taken one memory at a time."""

    def __init__(self, items: Iterator[Revision]) -> None:
        self._items = items
        self._next: Revision | None = next(items, None)

    def take(self, memory_id: str) -> list[Revision]:
        out: list[Revision] = []
        while self._next is not None and self._next.memory_id == memory_id:
            out.append(self._next)
            self._next = next(self._items, None)
        return out
