"""The archive service: a person exports their memories into one archive file, and imports an
archive - or a plain JSON-lines file of memories - back into a store.

The archive format lives in `core/archive_format.py`; writing an archive in
`core/archive_export.py` (its audit log read by `core/archive_audit.py`); the records' exact
shapes in `core/archive_records.py`; reading and verifying an archive in `core/archive_reader.py`
(its memories read again a chunk at a time: `core/archive_memories.py`); bringing it into the
store in `core/archive_import.py` (with `archive_renames`, `archive_facts`, `archive_refusals`),
and what an import reports in `core/archive_report.py`;
docs/backup-and-export.md describes the files.
Everything here is a person's action: an agent's connection is refused.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core import audit, old_names, tombstones
from core.archive_export import Exporter
from core.archive_format import Filters, Manifest
from core.archive_import import CHUNK, Placement
from core.archive_reader import is_archive, open_archive, read_lines
from core.archive_records import ArchivedMemory, lone_surrogate
from core.archive_renames import rename_old_names
from core.archive_report import ImportReport, Tally
from core.bulk import refused_forgotten
from core.clock import Clock
from core.dedupe import dedupe_memory_id, dedupe_target, live_with_text, text_key, upserted
from core.errors import (
    CairnError,
    Forbidden,
    InvalidInput,
    IOFault,
    NotFound,
    ParseError,
    ScopeDenied,
    TooLarge,
)
from core.governance import Gate, Outcome, secret_refused
from core.idempotency import replay, replayed, request_hash
from core.memory_service import MemoryService
from core.model import Caller, Memory, Scope, Status, Surface, WriteResult, WriteStatus
from core.paths import Paths
from core.requests import WriteRequest
from core.revisions import MemoryObserver
from core.store import Store
from core.validation import content_hash
from core.workspace import WorkspaceRegistry, canonical_path
from core.writer import WriteTx

# A workspace a dry run would register (it does not exist yet, so it has no id yet).
_NEW_WORKSPACE = "ws_(new)"
_BOUND_SCOPES = (Scope.PROJECT, Scope.SESSION)  # the scopes whose memories belong to a workspace


def _person(caller: Caller, what: str) -> None:
    if not caller.is_human:
        raise Forbidden(f"only a person can {what}: agents propose, humans decide")


def import_source(raw: str | Path) -> Path:
    """The file an import reads, as an absolute path (`~` expanded).

    Raises:
        InvalidInput: it is a folder.
        NotFound: there is no file there.
        IOFault: it cannot be read (its mode, a folder on the way the user may not enter): said
            before anyone is asked to confirm (until 2026-12-01 after, or a traceback).
    """
    path = Path(os.path.abspath(os.path.expanduser(raw)))
    try:
        if path.is_dir():
            raise InvalidInput(
                f"{path} is a folder; give an archive (.zip) or a JSON lines file",
                data={"file": str(path)},
            )
        if not path.is_file():
            raise NotFound(f"there is no file at {path}", data={"file": str(path)})
        with path.open("rb"):
            pass
    except OSError as e:
        raise IOFault(f"{path} could not be read: {e.strerror or e}") from e
    return path


def _absolute(path: Path, what: str) -> Path:
    """`path` with `~` expanded, which must then be absolute: Cairn may run in another folder
    than its caller (the daemon), so a relative path would name a file the caller never meant.

    Raises:
        InvalidInput: a relative path.
    """
    expanded = Path(os.path.expanduser(path))
    if not expanded.is_absolute():
        raise InvalidInput(
            f"{what} {str(path)!r} is not an absolute path (start it with / or ~): a relative "
            "one would be taken from the folder Cairn runs in, not yours",
            data={"file": str(path)},
        )
    return expanded


class ArchiveService:
    """Export and import, for a person."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        paths: Paths,
        memories: MemoryService,
        workspaces: WorkspaceRegistry,
        gate: Gate,
        observers: Sequence[MemoryObserver],
        identity_max_bytes: int,
    ) -> None:
        self._store = store
        self._identity_max_bytes = identity_max_bytes
        self._clock = clock
        self._memories = memories
        self._workspaces = workspaces
        self._gate = gate
        self._observers = tuple(observers)
        self._exporter = Exporter(store, clock, paths)

    # -- export ------------------------------------------------------------------------------

    def workspace_ids(self, directories: Sequence[str]) -> frozenset[str]:
        """The ids of workspaces named by directory (which need not exist any more).

        Raises:
            InvalidInput: a path that is not absolute.
            NotFound: a directory Cairn has no workspace for.
        """
        out: set[str] = set()
        conn = self._store.read_db.conn()
        for raw in directories:
            expanded = os.path.expanduser(raw.strip())
            if not os.path.isabs(expanded):
                raise InvalidInput(
                    f"workspace path {raw!r} is relative; give an absolute path",
                    data={"field": "workspaces"},
                )
            path = os.path.normcase(os.path.realpath(expanded))
            row = conn.execute("SELECT id FROM workspace WHERE path = ?", (path,)).fetchone()
            if row is None:
                raise NotFound(
                    f"Cairn has no workspace at {path} (no memory was ever bound to it)",
                    data={"field": "workspaces", "path": path},
                )
            out.add(str(row[0]))
        return frozenset(out)

    def export(
        self,
        caller: Caller,
        out: Path,
        *,
        scopes: frozenset[Scope] = frozenset(),
        workspace_ids: frozenset[str] = frozenset(),
    ) -> Manifest:
        """Write every memory (with all its revisions and relations), identity history, the
        review queue, the audit log, the capture policy, workspaces and tombstones into one zip
        archive at `out` (owner-only), from one consistent snapshot. `scopes` and
        `workspace_ids` narrow the memories (and what hangs on them); the manifest says what
        was left out.

        Raises:
            Forbidden: the caller is not a person.
            NotFound: an unknown workspace id.
            InvalidInput: `out` is relative or a folder, or its folder does not exist.
            IOFault: the archive could not be written.
        """
        _person(caller, "export memories")
        out = _absolute(out, "the archive to write,")
        conn = self._store.read_db.conn()
        for wid in sorted(workspace_ids):
            if conn.execute("SELECT 1 FROM workspace WHERE id = ?", (wid,)).fetchone() is None:
                raise NotFound(f"workspace {wid} not found", data={"id": wid})
        return self._exporter.export(out, Filters(scopes, workspace_ids))

    # -- import ------------------------------------------------------------------------------

    def import_(
        self, caller: Caller, path: Path, *, dry_run: bool = False, workspace: str | None = None
    ) -> ImportReport:
        """Bring an archive from `export` - or a JSON-lines file of memories - into this store,
        as the person's decision (no review). `dry_run` reports the same and writes nothing.

        An archive is verified completely first (format, every file's sha256, nothing missing
        or extra) and refused whole otherwise. It never changes what the store holds: a memory
        already here with the same history is unchanged, with fewer revisions it gains the
        missing ones, with another history it is a conflict (this store's copy kept); a
        forgotten memory is never brought back. The review queue, the audit log and the
        capture policy of the archive are not imported.

        Each line of a JSON-lines file is a `memory.write` (plus an optional `workspace`
        directory for project memories); the gate still refuses secrets and flags injections,
        and each line's outcome is reported. A project or session line without a `workspace`
        lands in `workspace` (the directory the person ran the command in; None: the caller's
        bound workspace), registered only by a real import of such a line. An archive brings
        its own workspaces and ignores `workspace`.

        Raises:
            Forbidden: the caller is not a person.
            NotFound: no such file.
            InvalidInput: a relative path; an archive that is not valid, naming the file at
                fault.
        """
        _person(caller, "import memories")
        path = import_source(_absolute(path, "the file to import,"))
        try:
            archive = is_archive(path)
        except OSError as e:
            raise IOFault(f"{path} could not be read: {e.strerror or e}") from e
        if archive:
            return self._import_archive(path, dry_run)
        if path.suffix.lower() == ".zip":  # read as text it is only "not UTF-8" line by line
            raise InvalidInput(
                f"{path} is named .zip but is not a zip archive (damaged, or not an export); "
                "nothing was imported",
                data={"file": str(path)},
            )
        return self._import_jsonl(caller, path, dry_run, workspace)

    def _import_archive(self, path: Path, dry_run: bool) -> ImportReport:
        with open_archive(path, self._memories.limits) as read:
            tally = Tally("archive", str(path), dry_run)
            with self._store.read_db.atomic():
                archive, renames = rename_old_names(read, self._store.read_db.conn(), tally)
            placement = Placement(
                archive,
                tally,
                self._observers,
                self._secret_in,
                self._clock,
                identity_max_bytes=self._identity_max_bytes,
            )
            if dry_run:
                with self._store.read_db.atomic():
                    conn = self._store.read_db.conn()
                    placement.workspaces(conn, None)
                    for chunk in placement.chunks():
                        placement.memories(conn, chunk, None)
                    placement.relations(conn, None)
                    placement.stranded(conn)
                    placement.identity(conn, None)
                    placement.tombstones(conn, None)
            else:
                self._place(placement, renames, tally)
        manifest = archive.manifest
        about = {
            k: manifest.get(k)
            for k in ("format_version", "created_at", "cairn_version", "schema_version", "filters")
        }
        return tally.report(archive=about)

    def _place(self, placement: Placement, renames: old_names.Renames, tally: Tally) -> None:
        run = self._store.writer.run
        # One job per chunk: the writer is never held for the whole import, and each memory
        # lands with all its revisions. The workspaces land with the first chunk (or the last
        # job, when there are no memories), never on their own: until 2026-11-30 they had a job
        # of their own, and an import that stopped at its first chunk left the archive's
        # workspaces behind. Each chunk is read from the archive outside its job - but the
        # first, whose memories (those this store holds first) `workspaces` decides.
        chunks = placement.chunks()
        starts = range(0, len(placement.archive.memories), CHUNK)
        for start in starts:
            part = next(chunks) if start else None

            def job(tx: WriteTx, part: Sequence[ArchivedMemory] | None = part) -> None:
                if part is None:
                    placement.workspaces(tx.conn, tx)
                    part = next(chunks)
                placement.memories(tx.conn, part, tx)

            run(job)

        # Everything after the memories, and the `import` event with the whole report's
        # counts, in one transaction: nothing else lands without that event.
        def finish(tx: WriteTx) -> None:
            if not starts:
                placement.workspaces(tx.conn, tx)
            placement.relations(tx.conn, tx)
            # What landed superseded by a memory not live here gets its place back, as a
            # forget would give it (until 2026-11-30 it stayed hidden behind that id).
            self._memories.release_in(tx, Caller(Surface.IMPORT), placement.stranded(tx.conn))
            placement.identity(tx.conn, tx)
            placement.tombstones(tx.conn, tx)
            old_names.remember(tx.conn, renames)
            self._audit(tx, tally)

        run(finish)

    def _secret_in(self, fields: Mapping[str, str | None]) -> str | None:
        _flags, secret = self._gate.scan(fields)
        return secret_refused(secret).message if secret is not None else None

    def _audit(self, tx: WriteTx, tally: Tally) -> None:
        detail: dict[str, Any] = {"source": tally.source, **dict(sorted(tally.counts.items()))}
        for name in ("conflicts", "identity_conflicts"):
            detail[name] = len(tally.details.get(name, ()))
        audit.record(tx, Caller(Surface.IMPORT), "import", detail=detail, at=self._clock.now_ms())

    # -- JSON lines --------------------------------------------------------------------------

    def _import_jsonl(
        self, caller: Caller, path: Path, dry_run: bool, default: str | None
    ) -> ImportReport:
        tally = Tally("jsonl", str(path), dry_run)
        outcomes: dict[int, dict[str, Any]] = {}
        groups: dict[str | None, list[tuple[int, WriteRequest]]] = {}
        try:
            with open(path, "rb") as fh:
                for number, raw in read_lines(fh):
                    try:
                        parsed = _parse_line(raw, first=number == 1)
                    except CairnError as e:
                        outcomes[number] = _failed(number, e)
                        continue
                    if parsed is not None:
                        groups.setdefault(parsed[0], []).append((number, parsed[1]))
        except OSError as e:
            raise IOFault(f"{path} could not be read: {e.strerror or e}") from e
        ahead = _Ahead()
        if default is None and caller.workspace_id is None and None in groups:
            # No folder for a project line without its own: a person's connection binds none,
            # so the write path's "give a workspace directory when connecting" does not apply
            # (until 2026-11-30 it was what the line said).
            unplaced = [(n, r) for n, r in groups[None] if r.scope is Scope.PROJECT]
            refused = ScopeDenied(_NO_WORKSPACE, data={"field": "scope"})
            outcomes.update((n, _failed(n, refused)) for n, _ in unplaced)
            groups[None] = [(n, r) for n, r in groups[None] if r.scope is not Scope.PROJECT]
        for where, items in groups.items():
            # Lines with no workspace of their own land in the command's folder - which is
            # registered only when one of them is a project or session memory.
            needs = where is not None or any(r.scope in _BOUND_SCOPES for _n, r in items)
            try:
                workspace_id = self._workspace(caller, where or default, dry_run) if needs else None
            except CairnError as e:
                outcomes.update((n, _failed(n, e)) for n, _ in items)
                continue
            # The person's import: their decision, stamped as an import (author tier human).
            importer = Caller(
                Surface.IMPORT, workspace_id=workspace_id, session_id=caller.session_id
            )
            for start in range(0, len(items), CHUNK):
                outcomes.update(self._land(importer, items[start : start + CHUNK], dry_run, ahead))
        lines = [outcomes[n] for n in sorted(outcomes)]
        for line in lines:
            tally.count(_counted_as(line))
        if not dry_run:
            self._store.writer.run(lambda tx: self._audit(tx, tally))
        return tally.report(lines=lines)

    def _workspace(self, caller: Caller, raw: str | None, dry_run: bool) -> str | None:
        if raw is None:
            return caller.workspace_id
        if not dry_run:
            return self._workspaces.resolve(raw).id
        path = canonical_path(raw)
        row = (
            self._store.read_db.conn()
            .execute("SELECT id FROM workspace WHERE path = ?", (path,))
            .fetchone()
        )
        return str(row[0]) if row is not None else _NEW_WORKSPACE

    def _land(
        self,
        importer: Caller,
        items: Sequence[tuple[int, WriteRequest]],
        dry_run: bool,
        ahead: _Ahead,
    ) -> dict[int, dict[str, Any]]:
        """One chunk of lines: forgotten text refused, the rest written (or, for a dry run,
        judged the way the write would judge it)."""
        buried = tombstones.buried_texts(
            self._store.read_db.conn(), (content_hash(r.content) for _, r in items)
        )
        out: dict[int, dict[str, Any]] = {}
        live: list[tuple[int, WriteRequest]] = []
        for number, req in items:
            if content_hash(req.content) in buried:
                out[number] = {
                    "line": number,
                    "status": WriteStatus.REFUSED.value,
                    "reason_code": "forgotten",
                    "reason": "this text was forgotten here; an import does not bring it back",
                }
            else:
                live.append((number, req))
        reqs = [r for _, r in live]
        if dry_run:
            results = [self._judge(importer, r, ahead) for r in reqs]
        else:
            results = self._memories.write_many(importer, reqs)
        for (number, _), result in zip(live, results, strict=True):
            out[number] = _outcome(number, result)
        return out

    def _judge(
        self, importer: Caller, req: WriteRequest, ahead: _Ahead
    ) -> WriteResult | CairnError:
        """What `write_many` would answer for one line, without writing, by the write path's
        own rules: its validation, the gate, idempotency keys, dedupe keys and exact
        duplicates - against the store and the lines before it (`ahead`)."""
        try:
            memory = self._memories.prepare(importer, req)
        except CairnError as e:
            return e
        verdict = self._memories.check_new(importer, memory, req)
        if verdict.outcome is Outcome.REFUSE:
            return verdict.refused()
        return self._answer(importer, req, memory, ahead)

    def _answer(
        self, importer: Caller, req: WriteRequest, memory: Memory, ahead: _Ahead
    ) -> WriteResult | CairnError:
        """`_judge` past the gate: an idempotency key answered before, or `_foresee`."""
        conn = self._store.read_db.conn()
        if req.idempotency_key is None:
            return self._foresee(conn, memory, ahead)
        key = (importer.actor, req.idempotency_key)
        try:
            if key in ahead.answers:
                return replay(req, importer, *ahead.answers[key])
            earlier = replayed(conn, importer, req)
        except CairnError as e:
            return e
        if earlier is not None:
            return earlier
        result = self._foresee(conn, memory, ahead)
        ahead.answers[key] = (request_hash(req, importer), result.to_dict())
        return result

    def _foresee(self, conn: sqlite3.Connection, memory: Memory, ahead: _Ahead) -> WriteResult:
        """What storing `memory` would answer (see `_judge`)."""
        where = (memory.scope.value, memory.workspace_id or "", memory.session_id or "")
        if memory.dedupe_key is None:
            text = text_key(memory)
            if text in ahead.texts or live_with_text(conn, text, self._clock.now_ms()):
                return WriteResult(WriteStatus.STORED, duplicate=True)
            ahead.texts.add(text)
            return WriteResult(WriteStatus.STORED, revision=1)
        return self._foresee_keyed(conn, memory, (*where, memory.dedupe_key), ahead)

    def _foresee_keyed(
        self,
        conn: sqlite3.Connection,
        memory: Memory,
        key: tuple[str, str, str, str],
        ahead: _Ahead,
    ) -> WriteResult:
        """`_foresee` for a memory with a dedupe key (`key`: scope, workspace, session, key)."""
        existing = ahead.keyed.get(key) or dedupe_target(conn, memory, self._clock.now_ms())
        if existing is not None:
            if existing.status is Status.FORGOTTEN:
                return refused_forgotten(tombstones.tombstoned_id(conn, existing.id))
            changed = upserted(existing, memory)
            if changed is None:
                return WriteResult.stored(existing, duplicate=True)
            ahead.keyed[key] = replace(changed, revision=existing.revision + 1)
            return WriteResult.stored(ahead.keyed[key])
        mid = dedupe_memory_id(memory.scope, memory.workspace_id, memory.session_id, *key[3:])
        by = tombstones.tombstoned_id(conn, mid)
        if by is not None:  # purged: no row left, the tombstone stays
            return refused_forgotten(by)
        ahead.keyed[key] = replace(memory, id=mid)
        return WriteResult.stored(ahead.keyed[key])


@dataclass
class _Ahead:
    """What the lines before the one judged would have written, for a dry run: their texts,
    the keyed memories as they would stand, and the answers to their idempotency keys."""

    texts: set[tuple[str, str, str, str]] = field(default_factory=set)
    keyed: dict[tuple[str, str, str, str], Memory] = field(default_factory=dict)
    answers: dict[tuple[str, str], tuple[str, dict[str, Any]]] = field(default_factory=dict)


def _parse_line(raw: bytes | None, *, first: bool) -> tuple[str | None, WriteRequest] | None:
    """(workspace directory or None, the write) for one line; None for a blank line."""
    if raw is None:
        raise TooLarge("the line is too long")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError("the line is not UTF-8 text") from e
    if first:
        text = text.removeprefix("\ufeff")
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    # Deep nesting makes the parser raise RecursionError, not a decode error (FACTS.md).
    except (ValueError, RecursionError) as e:
        raise ParseError("the line is not valid JSON") from e
    if not isinstance(obj, dict):
        raise InvalidInput("each line must be a JSON object (the fields of memory.write)")
    # JSON spells text UTF-8 cannot carry ("\ud800"); refused here, as the socket refuses it,
    # before anything hashes it (until 2026-11-30 the import crashed half-way on one).
    for name, value in obj.items():
        if lone_surrogate(name) or lone_surrogate(value):
            raise InvalidInput(
                f"field {name!r} is not valid UTF-8 (an unpaired surrogate)", data={"field": name}
            )
    workspace = obj.pop("workspace", None)
    if workspace is not None and not isinstance(workspace, str):
        raise InvalidInput("workspace must be a directory path", data={"field": "workspace"})
    return workspace, WriteRequest.from_params(obj)


_NO_WORKSPACE = (
    "scope 'project' needs a workspace, and this import has none: pass `workspace` (a "
    "directory) to archive.import - `cairn import` passes the folder it runs in - or give the "
    "line its own `workspace`"
)


def _failed(number: int, e: CairnError) -> dict[str, Any]:
    return {"line": number, "status": "error", "error": e.code.label, "message": e.message}


def _outcome(number: int, result: WriteResult | CairnError) -> dict[str, Any]:
    if isinstance(result, CairnError):
        return _failed(number, result)
    out: dict[str, Any] = {"line": number, **result.to_dict()}
    if result.status is WriteStatus.STORED:
        if result.duplicate:
            out["result"] = "unchanged"
        else:
            out["result"] = "added" if (result.revision or 1) == 1 else "updated"
    return out


def _counted_as(line: dict[str, Any]) -> str:
    if line["status"] == WriteStatus.STORED.value:
        return str(line["result"])
    if line["status"] == "error":
        return "errors"
    if line.get("reason_code") == "forgotten":
        return "skipped_forgotten"
    return "refused"


__all__ = ["ArchiveService", "ImportReport", "Manifest"]
