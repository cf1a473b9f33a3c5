"""Bringing a read and verified archive (`core/archive_reader.py`) into the store: what is not
there yet - memories with their revisions, relations, identity versions, workspaces and
tombstones - without ever touching what the store already holds.

The same planning code runs for a dry run (on a read transaction, writing nothing) and for the real
import (inside writer jobs, a chunk of memories per job, each memory with all its revisions in one
transaction), so a dry run reports exactly what the import would do.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass, field, replace
from typing import Any

from core import audit, old_names, tombstones
from core.archive_reader import (
    Archive,
)
from core.archive_records import OWN_ACTORS, ArchivedMemory
from core.clock import Clock
from core.dedupe import dedupe_holder, dedupe_memory_id, text_key
from core.errors import InvalidInput
from core.identity import IdentityVersion, insert_version
from core.model import (
    RESERVED_AGENT_NAMES,
    Caller,
    Memory,
    RelationKind,
    Revision,
    Status,
    Surface,
)
from core.old_keys import takes_key
from core.records import (
    SELECT_REVISION,
    insert_memories,
    insert_revisions,
    memory_values,
    next_memory_seq,
    replace_memory,
    revision_from_row,
    revision_row,
)
from core.revisions import MemoryObserver
from core.validation import (
    CONTROL,
    SESSION_CONTROL,
    content_hash,
    control_in_path,
    normalize_breaks,
    refuse_control,
)
from core.workspace import new_workspace_id
from core.writer import WriteTx

# -- the report ---------------------------------------------------------------------------------

NOT_IMPORTED = (
    "suggestions.jsonl: the other store's review queue stays in the archive",
    "audit.jsonl: the other store's history stays in the archive (this store records the import)",
    "policy.toml: your capture policy stays as it is (copy the file over yours to adopt it)",
)


@dataclass(frozen=True)
class ImportReport:
    """What an import did - or, for a dry run, would do. Counts are memories unless named."""

    source: str  # "archive" or "jsonl"
    path: str
    dry_run: bool
    added: int = 0
    updated: int = 0
    updated_revisions: int = 0  # revisions appended to memories this store already had
    unchanged: int = 0
    skipped_forgotten: int = 0
    refused: int = 0  # refused by the gate: a secret (jsonl lines; archive memories)
    errors: int = 0  # jsonl: lines that are not a valid write
    skipped: tuple[dict[str, str], ...] = ()  # {id, reason}: forgotten, never brought back
    conflicts: tuple[dict[str, str], ...] = ()  # {id, reason}: this store's copy was kept
    # {id, reason}: archive memories holding a secret, and relations (id `FROM KIND TO`) whose
    # created_by or resolved_by holds one - each left out (`refused` counts the memories)
    secrets: tuple[dict[str, str], ...] = ()
    renamed: tuple[dict[str, str], ...] = ()  # {archive_id, id}: dedupe-key ids of a moved path
    # {id, reason}: an old store's dedupe key that reads as one another memory holds, kept as it
    # was (as schema 2.3 keeps it in a live store, `core/old_keys.py`)
    keys_kept: tuple[dict[str, str], ...] = ()
    # {what, was, now}: an agent's name or a kind that ended in a line break (an export from
    # before 2026-11-30), given the name this store gave it or would give it
    names_renamed: tuple[dict[str, str], ...] = ()
    # {id, reason}: imported superseded by a memory not live here, so given back its place
    released: tuple[dict[str, str], ...] = ()
    relations_added: int = 0
    relations_unchanged: int = 0
    relations_skipped: int = 0  # an end is not in this store (forgotten, or left out)
    # a relation's note, a tombstone's reason or session id holding a secret (or a control
    # character) - left out, the relation or tombstone kept; a tombstone's forgotten_by holding
    # one, which reads `import` instead
    notes_dropped: int = 0
    identity_added: int = 0
    identity_unchanged: int = 0
    identity_conflicts: tuple[dict[str, Any], ...] = ()  # {doc, version, reason}
    tombstones_added: int = 0
    tombstones_unchanged: int = 0
    workspaces_added: int = 0
    workspaces_remapped: tuple[dict[str, str], ...] = ()  # {path, archive_id, id}
    lines: tuple[dict[str, Any], ...] = ()  # jsonl: each line's outcome, in order
    archive: dict[str, Any] | None = None  # the archive's format, time, versions and filters
    not_imported: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = (
                [v if isinstance(v, str) else dict(v) for v in value]
                if isinstance(value, tuple)
                else value
            )
        return out


@dataclass
class Tally:
    """An ImportReport being filled in."""

    source: str
    path: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    added_ids: set[str] = field(default_factory=set)

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by

    def note(self, name: str, item: dict[str, Any]) -> None:
        self.details.setdefault(name, []).append(item)

    def report(
        self, *, archive: dict[str, Any] | None = None, lines: Sequence[dict[str, Any]] = ()
    ) -> ImportReport:
        return ImportReport(
            source=self.source,
            path=self.path,
            dry_run=self.dry_run,
            **self.counts,  # type: ignore[arg-type]
            **{k: tuple(v) for k, v in self.details.items()},  # type: ignore[arg-type]
            lines=tuple(lines),
            archive=archive,
            not_imported=NOT_IMPORTED if self.source == "archive" else (),
        )


# -- bringing an archive into the store ---------------------------------------------------------

CHUNK = 500

_STATUS_OF = (
    "SELECT m.id, m.status, m.dedupe_key FROM memory m JOIN json_each(?) j ON j.value = m.id"
)
_LIVE_IDS = (
    "SELECT m.id FROM memory m JOIN json_each(?) j ON j.value = m.id WHERE m.status != 'forgotten'"
)
_TOMBSTONED_IDS = "SELECT t.memory_id FROM tombstone t JOIN json_each(?) j ON j.value = t.memory_id"
_EXPIRED_IDS = f"{_TOMBSTONED_IDS} WHERE NOT ({tombstones.NOT_EXPIRED})"
# The live memories holding a text (as `dedupe.live_with_text` finds them), oldest first.
_SAME_CONTENT = (
    "SELECT m.id, m.content_hash, m.scope, coalesce(m.workspace_id, ''), "
    "coalesce(m.session_id, '') FROM memory m JOIN json_each(?) j ON j.value = m.content_hash "
    "WHERE m.status IN ('active', 'archived') AND (m.expires_at IS NULL OR m.expires_at > ?) "
    "ORDER BY m.seq"
)
_REVISIONS_OF = (
    SELECT_REVISION
    + " JOIN json_each(?) j ON j.value = r.memory_id ORDER BY r.memory_id, r.revision"
)
_RELATION = (
    "SELECT open, note, created_at, created_by, resolved_at, resolved_by, resolution "
    "FROM relation WHERE kind = ? AND from_id = ? AND to_id = ?"
)
_INSERT_RELATION = (
    "INSERT INTO relation (kind, from_id, to_id, open, note, created_at, created_by, "
    "resolved_at, resolved_by, resolution) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_TOMBSTONE = (
    "INSERT OR IGNORE INTO tombstone (memory_id, content_hash, scope, workspace_id, session_id, "
    "forgotten_by, forgotten_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _ids(values: Sequence[str] | set[str]) -> str:
    return json.dumps(sorted(set(values)))


_TextKey = tuple[str, str, str, str]  # where a store keeps one text once: `text_key`


def _live_text(m: Memory, now: int) -> _TextKey | None:
    """Where `m` keeps its text once live (active or archived, unexpired); None when it is not
    live, so holds no text against another memory."""
    if m.status not in (Status.ACTIVE, Status.ARCHIVED):
        return None
    if m.expires_at is not None and m.expires_at <= now:
        return None
    return text_key(m)


class Placement:
    """One import - or dry run - of one archive into one store. Each step decides against `conn`
    (a read transaction for a dry run, the write transaction otherwise) and, given the write
    job's `tx`, does what it decided; the decisions never depend on which."""

    def __init__(
        self,
        archive: Archive,
        tally: Tally,
        observers: Sequence[MemoryObserver],
        secret_in: Callable[[Mapping[str, str | None]], str | None],
        clock: Clock,
        *,
        identity_max_bytes: int,
    ) -> None:
        """`secret_in` is the gate's scan: the refusal's words for fields holding a secret;
        `identity_max_bytes` is this store's `identity.max_bytes`."""
        self.archive = archive
        self._identity_max_bytes = identity_max_bytes
        self._clock = clock
        self._tally = tally
        self._observers = observers
        self._secret_in = secret_in
        self._ids = frozenset(am.memory.id for am in archive.memories)
        self._forgotten_there = frozenset(t.memory_id for t in archive.tombstones)
        self._landing: dict[str, Memory] = {}  # added or appended, as the store will hold them
        # An exact duplicate is one memory in Cairn, in an archive as in a write: the texts the
        # memories decided so far bring (-> why another with the text is not brought), and the
        # archive's memories whose copy here stays as it is.
        self._texts: dict[_TextKey, str] = {}
        self._kept: set[str] = set()
        self._archived_texts: dict[str, _TextKey | None] = {}  # `workspaces` fills it
        # workspace id -> why its memories stay out: a folder this store does not register
        self._unplaced: dict[str, str] = {}

    def chunks(self, size: int = CHUNK) -> Iterator[Sequence[ArchivedMemory]]:
        items = self.archive.memories
        for start in range(0, len(items), size):
            yield items[start : start + size]

    def workspaces(self, conn: sqlite3.Connection, tx: WriteTx | None) -> None:
        """Workspaces by path: the store's id for a path it knows, the archive's id for a new
        path (a fresh one if that id is taken here); then the archive speaks in this store's.
        A new path holding a control character (an old store's: no write registers one since
        2026-11-30) is not registered, and each memory bound to it is a conflict saying what
        to do - the rest of the archive lands (until 2026-11-30 it was refused whole)."""
        tally, mapping = self._tally, {}
        for ws in self.archive.workspaces:
            refusal = self._secret_in({"workspace": ws.path})
            if refusal is not None:
                raise InvalidInput(
                    f"workspaces.jsonl names a folder whose path holds a secret ({refusal}); "
                    "nothing was imported",
                    data={"file": "workspaces.jsonl"},
                )
            row = conn.execute("SELECT id FROM workspace WHERE path = ?", (ws.path,)).fetchone()
            if row is not None:
                target = str(row[0])
            elif control_in_path(ws.path) is not None:
                self._unplaced[ws.id] = (
                    f"its workspace {ws.id} (folder {ws.path!r}) holds a control character in "
                    "its folder's name, which Cairn no longer takes: in the store it came from, "
                    f"move the workspace to a clean folder (`cairn workspace move {ws.id} "
                    "NEW-FOLDER`) and export again; not imported"
                )
                continue
            else:
                taken = conn.execute("SELECT 1 FROM workspace WHERE id = ?", (ws.id,)).fetchone()
                target = ws.id if taken is None else new_workspace_id()
                tally.count("workspaces_added")
                if tx is not None:
                    conn.execute(
                        "INSERT INTO workspace (id, path, created_at) VALUES (?, ?, ?)",
                        (target, ws.path, ws.created_at),
                    )
            mapping[ws.id] = target
            if target != ws.id:
                tally.note(
                    "workspaces_remapped", {"path": ws.path, "archive_id": ws.id, "id": target}
                )
        self.archive = remap(self.archive, mapping, tally)
        self._keys_as_now(conn)
        self._ids = frozenset(am.memory.id for am in self.archive.memories)
        self._held_first(conn)
        self._archived_texts = self._texts_in_archive()

    def _keys_as_now(self, conn: sqlite3.Connection) -> None:
        """The archive's dedupe keys with their line breaks as line feeds, as every write reads
        a key since 2026-11-30 (an old store's archive may hold `wiki\\r`, which no write could
        reach once imported as it was - until 2026-11-30 it was). Where two keys then read the
        same in one scope, workspace and session, one memory takes the key as `old_keys` decides
        in a live store: the one spelling it so already (in the archive, or here), else the one
        `takes_key` ranks first; the others keep their old keys as they were, each noted under
        `keys_kept`. A memory this store holds with its old key keeps it (no write changes a
        memory's key)."""
        memories = self.archive.memories
        old = [
            i
            for i, am in enumerate(memories)
            if am.memory.dedupe_key is not None
            and normalize_breaks(am.memory.dedupe_key) != am.memory.dedupe_key
        ]
        if not old:  # nearly every archive
            return
        held = {
            str(r[0]): r[2]
            for r in conn.execute(_STATUS_OF, (_ids([memories[i].memory.id for i in old]),))
        }

        def place(m: Memory) -> _TextKey:
            key = normalize_breaks(m.dedupe_key or "")
            return (m.scope.value, m.workspace_id or "", m.session_id or "", key)

        groups: dict[_TextKey, list[int]] = {}
        for i in old:
            m = memories[i].memory
            if held.get(m.id) != m.dedupe_key:
                groups.setdefault(place(m), []).append(i)
        spelt = {
            place(am.memory): am.memory.id
            for am in memories
            if am.memory.dedupe_key is not None and place(am.memory)[3] == am.memory.dedupe_key
        }
        now: dict[int, str] = {}
        for where, group in groups.items():
            key = where[3]
            holder = spelt.get(where) or dedupe_holder(
                conn, replace(memories[group[0]].memory, dedupe_key=key)
            )
            taker = next((i for i in group if memories[i].memory.id == holder), None)
            if holder is None:
                taker = max(
                    group,
                    key=lambda i: takes_key(
                        memories[i].memory.status.value, memories[i].memory.updated_at, i
                    ),
                )
                holder = memories[taker].memory.id
            for i in group:
                if i == taker:
                    now[i] = key
                    continue
                self._tally.note(
                    "keys_kept",
                    {
                        "id": memories[i].memory.id,
                        "reason": f"keeps its dedupe key {memories[i].memory.dedupe_key!r} as it "
                        f"was: {holder} holds it as it reads now ({key!r})",
                    },
                )
        self.archive = replace(
            self.archive,
            memories=tuple(
                replace(am, memory=replace(am.memory, dedupe_key=now[i])) if i in now else am
                for i, am in enumerate(memories)
            ),
        )

    def _held_first(self, conn: sqlite3.Connection) -> None:
        """The archive's memories this store holds before the new ones (each group in the
        file's order): whether a held memory keeps its text here is decided before a new memory
        holding that text is - so the outcome does not depend on the order of the lines (until
        2026-11-30 a new memory before a held one with another history landed beside it)."""
        held = {str(r[0]) for r in conn.execute(_STATUS_OF, (_ids(set(self._ids)),))}
        memories = self.archive.memories
        ordered = tuple(am for am in memories if am.memory.id in held) + tuple(
            am for am in memories if am.memory.id not in held
        )
        self.archive = replace(self.archive, memories=ordered)

    def _texts_in_archive(self) -> dict[str, _TextKey | None]:
        now = self._clock.now_ms()
        return {am.memory.id: _live_text(am.memory, now) for am in self.archive.memories}

    def memories(
        self, conn: sqlite3.Connection, chunk: Sequence[ArchivedMemory], tx: WriteTx | None
    ) -> None:
        """Decide each memory of one chunk - add, append revisions, unchanged, skip, conflict -
        and, inside a write job, do it (each memory with all its revisions)."""
        facts = self._facts(conn, chunk)
        adds: list[ArchivedMemory] = []
        appends: list[tuple[ArchivedMemory, int]] = []
        for am in chunk:
            outcome, detail = self._decide(conn, am, facts)
            if outcome in ("add", "append"):
                writing = am.revisions[0 if outcome == "add" else int(detail) :]
                control = _control_in(writing, am.memory)
                secret = self._secret_of(am, writing) if control is None else None
                if control is not None:
                    outcome, detail = "conflict", control
                elif secret is not None:
                    outcome, detail = "secret", secret
            if outcome == "secret":
                self._tally.count("refused")
                self._tally.note("secrets", {"id": am.memory.id, "reason": detail})
            if outcome in ("add", "append"):
                self._landing[am.memory.id] = am.memory
            self._hold_text(am, outcome, facts)
            if outcome == "add":
                adds.append(am)
                self._tally.count("added")
                self._tally.added_ids.add(am.memory.id)
            elif outcome == "append":
                have = int(detail)
                appends.append((am, have))
                self._tally.count("updated")
                self._tally.count("updated_revisions", len(am.revisions) - have)
            elif outcome == "unchanged":
                self._tally.count("unchanged")
            elif outcome == "skip":
                self._tally.count("skipped_forgotten")
                self._tally.note("skipped", {"id": am.memory.id, "reason": detail})
            else:
                self._tally.note("conflicts", {"id": am.memory.id, "reason": detail})
        if tx is not None:
            self._write(tx, adds, appends)

    def _hold_text(self, am: ArchivedMemory, outcome: str, facts: _Facts) -> None:
        """Note what `am` leaves live once decided: its text when it lands; that this store's
        copy stays as it is otherwise (its text is the store's)."""
        mid = am.memory.id
        if outcome in ("add", "append"):
            key = _live_text(am.memory, self._clock.now_ms())
            if key is not None:
                self._texts.setdefault(
                    key,
                    f"the archive holds the same text as {mid}, which lands; an exact duplicate "
                    "is one memory",
                )
        elif mid in facts.status:
            self._kept.add(mid)

    def _secret_of(self, am: ArchivedMemory, revisions: Sequence[Revision]) -> str | None:
        """Why a memory cannot be imported when it, or one of the `revisions` to write, holds a
        secret in any field (an archive is checked like every write - and hello's identifiers:
        secrets are never stored, whoever writes)."""
        m = am.memory
        refusal = self._secret_in(
            {
                "source": m.source,
                "dedupe_key": m.dedupe_key,
                "agent": m.agent,
                "session": m.session_id,
            }
        )
        if refusal is not None:
            return f"{refusal}; not imported"
        for r in revisions:
            fields = {
                "content": r.content,
                "summary": r.summary,
                "tags": "\n".join(r.tags) if r.tags else None,
                "keywords": r.keywords,
                "reason": r.reason,
                "actor": r.actor,
                "session": r.session_id,
            }
            refusal = self._secret_in(fields)
            if refusal is not None:
                return f"revision {r.revision}: {refusal}; not imported"
        return None

    def _facts(self, conn: sqlite3.Connection, chunk: Sequence[ArchivedMemory]) -> _Facts:
        ids = [am.memory.id for am in chunk]
        status: dict[str, str] = {}
        keys: dict[str, str | None] = {}
        for mid, state, key in conn.execute(_STATUS_OF, (_ids(ids),)):
            status[mid], keys[mid] = state, key
        hashes = {am.memory.id: [content_hash(r.content) for r in am.revisions] for am in chunk}
        texts = {h for each in hashes.values() for h in each}
        history: dict[str, list[Revision]] = {}
        held = [i for i in ids if status.get(i, "forgotten") != "forgotten"]
        for row in conn.execute(_REVISIONS_OF, (_ids(held),)):
            history.setdefault(row[0], []).append(revision_from_row(row))
        # An exact duplicate is one memory in Cairn: text this chunk would add that the store
        # already holds keeps the store's copy (`_decide_new` leaves out the archive's memories
        # this import may change).
        now = self._clock.now_ms()
        new = {
            hashes[am.memory.id][-1]
            for am in chunk
            if am.memory.id not in status and _live_text(am.memory, now) is not None
        }
        same: dict[_TextKey, list[str]] = {}
        for mid, h, scope, ws, sid in conn.execute(_SAME_CONTENT, (_ids(new), now)):
            same.setdefault((h, scope, ws, sid), []).append(mid)
        buried_texts = tombstones.buried_texts(conn, texts)
        return _Facts(
            status=status,
            buried={str(r[0]) for r in conn.execute(_TOMBSTONED_IDS, (_ids(ids),))},
            buried_texts=buried_texts,
            expired={str(r[0]) for r in conn.execute(_EXPIRED_IDS, (_ids(ids),))},
            expired_texts=tombstones.only_expired(conn, buried_texts),
            history=history,
            keys=keys,
            same=same,
            hashes=hashes,
        )

    def _decide(
        self, conn: sqlite3.Connection, am: ArchivedMemory, facts: _Facts
    ) -> tuple[str, str]:
        """(outcome, detail): add, append (detail: revisions already here), unchanged, skip or
        conflict (detail: why)."""
        m = am.memory
        if m.id in self._forgotten_there:
            return "skip", "forgotten in the store the archive came from"
        if m.id in facts.buried or facts.status.get(m.id) == "forgotten":
            gone = "expired and was purged" if m.id in facts.expired else "forgotten"
            return "skip", f"{gone} here"
        if m.workspace_id in self._unplaced:
            return "conflict", self._unplaced[m.workspace_id]
        if m.id in facts.status:
            return self._decide_held(conn, am, facts)
        return self._decide_new(conn, am, facts)

    @staticmethod
    def _decide_held(
        conn: sqlite3.Connection, am: ArchivedMemory, facts: _Facts
    ) -> tuple[str, str]:
        """A memory this store holds too: the same history, a longer one, or another one. A
        longer one keeps the memory's dedupe key (no write changes it) and may not move it where
        another memory here holds that key."""
        m = am.memory
        mine = facts.history.get(m.id, [])
        common = min(len(mine), len(am.revisions))
        split = next((i + 1 for i in range(common) if mine[i] != am.revisions[i]), None)
        if split is not None:
            return "conflict", f"history differs from revision {split} on; this store's copy kept"
        if len(am.revisions) <= len(mine):
            return "unchanged", ""
        buried = [h for h in facts.hashes[m.id][common:] if h in facts.buried_texts]
        if buried:
            return "skip", f"a later revision holds text that {_gone(buried, facts)} here"
        if m.dedupe_key is not None:
            holder = dedupe_holder(conn, m)
            if holder not in (None, m.id):
                return "conflict", f"{holder} here has the same dedupe key; this store's copy kept"
        if m.dedupe_key != facts.keys.get(m.id):
            return "conflict", (
                "the archive gives it another dedupe key than it has here (no write changes a "
                "memory's dedupe key); this store's copy kept"
            )
        return "append", str(common)

    def _decide_new(
        self, conn: sqlite3.Connection, am: ArchivedMemory, facts: _Facts
    ) -> tuple[str, str]:
        m = am.memory
        buried = [h for h in facts.hashes[m.id] if h in facts.buried_texts]
        if buried:
            return "skip", f"holds text that {_gone(buried, facts)} here"
        if m.dedupe_key is not None:
            holder = dedupe_holder(conn, m)
            if holder is not None:
                return "conflict", f"{holder} here has the same dedupe key; kept it"
        key = _live_text(m, self._clock.now_ms())
        if key is None:
            return "add", ""
        for held in facts.same.get(key, ()):
            # one of the archive's memories keeps its text here when the import leaves its copy
            # as it is (decided so: held memories are decided first, `_held_first`), or when the
            # archive's copy holds that text too
            if held not in self._ids or held in self._kept or self._archived_texts[held] == key:
                return "conflict", f"the same text is already here as {held}; kept that one"
        if key in self._texts:
            return "conflict", self._texts[key]
        return "add", ""

    def _write(
        self,
        tx: WriteTx,
        adds: Sequence[ArchivedMemory],
        appends: Sequence[tuple[ArchivedMemory, int]],
    ) -> None:
        conn = tx.conn
        if adds:
            first = next_memory_seq(conn, len(adds))
            fresh = [replace(am.memory, seq=first + i) for i, am in enumerate(adds)]
            insert_memories(
                conn,
                [memory_values(m, seq=m.seq, content_hash=content_hash(m.content)) for m in fresh],
            )
            insert_revisions(conn, [revision_row(r) for am in adds for r in am.revisions])
            conn.executemany(
                "INSERT INTO usage (memory_id, use_count, last_recalled_at) VALUES (?, ?, ?)",
                [
                    (m.id, m.use_count, m.last_recalled_at)
                    for m in fresh
                    if m.use_count or m.last_recalled_at is not None
                ],
            )
            for observer in self._observers:  # the search index, in the same transaction
                observer.memories_written(tx, fresh, fresh=True)
        if appends:
            for am, have in appends:
                insert_revisions(conn, [revision_row(r) for r in am.revisions[have:]])
                replace_memory(conn, am.memory, content_hash=content_hash(am.memory.content))
            for observer in self._observers:
                observer.memories_written(tx, [am.memory for am, _ in appends])
        # Each memory that lands has its `import` event in the same transaction, so the audit
        # log and the change feed account for it even if the import stops before its end.
        landed = [am.memory for am in adds] + [am.memory for am, _ in appends]
        audit.record_many(tx, Caller(Surface.IMPORT), "import", landed, at=self._clock.now_ms())

    def relations(self, conn: sqlite3.Connection, tx: WriteTx | None) -> None:
        """A relation lands when both its ends are here (and not forgotten)."""
        tally = self._tally
        links = [link for am in self.archive.memories for link in am.relations]
        ends = {link.from_id for link in links} | {link.to_id for link in links}
        live = {str(r[0]) for r in conn.execute(_LIVE_IDS, (_ids(ends),))} | tally.added_ids
        # What this import adds, as the store will hold it: a dry run, which writes nothing,
        # decides against it as the import decides against its own inserts.
        added: set[tuple[str, str, str]] = set()

        def held(kind: str, from_id: str, to_id: str) -> bool:
            return (kind, from_id, to_id) in added or bool(
                conn.execute(_RELATION, (kind, from_id, to_id)).fetchone()
            )

        for link in links:
            if link.from_id not in live or link.to_id not in live:
                tally.count("relations_skipped")
                continue
            kind = link.kind.value
            named = {"created_by": link.created_by, "resolved_by": link.resolved_by}
            refusal = self._secret_in(named)
            if refusal is not None:
                # left out as a memory whose agent or actor holds one is (until 2026-11-30 a
                # name's shape was checked, never scanned: a Slack token is a valid agent name)
                tally.note(
                    "secrets",
                    {
                        "id": f"{link.from_id} {kind} {link.to_id}",
                        "reason": f"{refusal}; not imported",
                    },
                )
                continue
            row = conn.execute(_RELATION, (kind, link.from_id, link.to_id)).fetchone()
            if (
                row is None
                and link.kind is RelationKind.CONTRADICTS
                and held(kind, link.to_id, link.from_id)
            ):
                tally.count("relations_unchanged")  # the same disagreement, named the other way
                continue
            note = link.note
            if note and (CONTROL.search(note) or self._secret_in({"note": note}) is not None):
                # the disagreement is kept; a secret in its note is not, nor an escape
                # sequence (refused in every note since 2026-11-30)
                note = None
                tally.count("notes_dropped")
            ours = (
                int(link.open),
                note,
                link.created_at,
                link.created_by,
                link.resolved_at,
                link.resolved_by,
                link.resolution,
            )
            if row is None:
                tally.count("relations_added")
                added.add((kind, link.from_id, link.to_id))
                if tx is not None:
                    conn.execute(_INSERT_RELATION, (kind, link.from_id, link.to_id, *ours))
            elif tuple(row) == ours:
                tally.count("relations_unchanged")
            else:
                tally.note(
                    "conflicts",
                    {
                        "id": f"{link.from_id} {kind} {link.to_id}",
                        "reason": "this store has the relation in another state; kept it",
                    },
                )

    def stranded(self, conn: sqlite3.Connection) -> list[tuple[str, str]]:
        """(id, why) of each memory this import lands superseded by one that will not be live
        here - not in the store nor imported, forgotten here, or expired: it must not stay hidden
        behind it (`MemoryService.release_in` frees it, as a forget of it would). Each is noted
        in the report as `released`. An expired memory is left to its purge."""
        now = self._clock.now_ms()

        def expired(expires_at: int | None) -> bool:
            return expires_at is not None and expires_at <= now

        candidates = [
            m
            for m in self._landing.values()
            if m.status is Status.SUPERSEDED and m.superseded_by and not expired(m.expires_at)
        ]
        targets = {str(m.superseded_by) for m in candidates}
        held = {
            str(r[0]): (str(r[1]), r[2])
            for r in conn.execute(
                "SELECT m.id, m.status, m.expires_at FROM memory m "
                "JOIN json_each(?) j ON j.value = m.id",
                (_ids(targets),),
            )
        }
        out: list[tuple[str, str]] = []
        for m in candidates:
            by = str(m.superseded_by)
            landing = self._landing.get(by)
            state = (landing.status.value, landing.expires_at) if landing else held.get(by)
            if state is None:
                why = (
                    "was not imported" if by in self._ids else "is neither here nor in the archive"
                )
            elif state[0] == Status.FORGOTTEN.value:
                why = "was forgotten here"
            elif expired(state[1]):
                why = "has expired"
            else:
                continue
            reason = f"its replacement {by} {why}"
            self._tally.note("released", {"id": m.id, "reason": reason})
            out.append((m.id, reason))
        return out

    def identity(self, conn: sqlite3.Connection, tx: WriteTx | None) -> None:
        """Versions this store lacks are added; a version that differs here is a conflict, and so
        is every later version of that document (it would continue the other history). The
        version that would become current must fit `identity.max_bytes` (agents are given it in
        their prompts); older ones may not, as after the limit was lowered (a revert to them is
        refused)."""
        docs: dict[str, list[IdentityVersion]] = {}
        for v in self.archive.identity:
            docs.setdefault(v.doc, []).append(v)
        for doc, items in docs.items():
            have = {
                int(r[0]): str(r[1])
                for r in conn.execute(
                    "SELECT version, content_hash FROM identity_version WHERE doc = ?", (doc,)
                )
            }
            split: int | None = None
            newest = max(v.version for v in items)
            for v in items:
                refusal = None
                if split is None and v.version not in have:
                    refusal = self._refusal(v, current=v.version == newest)
                if split is None and v.version not in have and refusal is None:
                    self._tally.count("identity_added")
                    if tx is not None:
                        insert_version(conn, v)
                    continue
                if split is None and refusal is None and have[v.version] == v.content_hash:
                    self._tally.count("identity_unchanged")
                    continue
                if split is None:
                    split = v.version
                    if refusal is not None:
                        reason, why = f"{refusal}; not imported", "was not imported"
                    else:
                        reason, why = "differs from this store's version; kept it", "differs here"
                else:
                    reason = f"follows version {split}, which {why}"
                self._tally.note(
                    "identity_conflicts", {"doc": doc, "version": v.version, "reason": reason}
                )

    def _refusal(self, v: IdentityVersion, *, current: bool) -> str | None:
        """Why a version this store lacks cannot be added: a control character (refused in
        every identity document since 2026-11-30), a secret, or - for the one that would become
        current - a size over this store's limit."""
        fields = {"content": v.content, "reason": v.reason, "author": v.author}
        for name, text in fields.items():
            found = CONTROL.search(text or "")
            if found:  # an escape sequence could hide words from a person at a terminal
                return f"its {name} holds a control character (U+{ord(found.group()):04X})"
        secret = self._secret_in(fields)
        if secret is not None:
            return secret
        size = len(v.content.encode("utf-8"))
        if current and size > self._identity_max_bytes:
            return (
                f"it is {size} bytes and identity.max_bytes here is {self._identity_max_bytes} "
                "(set it higher and import again)"
            )
        return None

    def tombstones(self, conn: sqlite3.Connection, tx: WriteTx | None) -> None:
        """Tombstones are added (never touching content); one naming a memory this store still
        holds is reported instead - only a person here can forget it."""
        tally = self._tally
        ids = {t.memory_id for t in self.archive.tombstones}
        have = {str(r[0]) for r in conn.execute(_TOMBSTONED_IDS, (_ids(ids),))}
        live = {str(r[0]) for r in conn.execute(_LIVE_IDS, (_ids(ids),))} | tally.added_ids
        for t in self.archive.tombstones:
            if t.memory_id in have:
                tally.count("tombstones_unchanged")
            elif t.memory_id in live:
                tally.note(
                    "conflicts",
                    {
                        "id": t.memory_id,
                        "reason": "forgotten in the store the archive came from, but held here: "
                        "kept it (forget it here if you meant to)",
                    },
                )
            else:
                have.add(t.memory_id)
                tally.count("tombstones_added")
                kept = t
                if t.reason and self._secret_in({"reason": t.reason}) is not None:
                    kept = replace(kept, reason=None)  # what stays forgotten does; a secret not
                    tally.count("notes_dropped")
                if t.session_id and (
                    SESSION_CONTROL.search(t.session_id)
                    or self._secret_in({"session": t.session_id}) is not None
                ):  # nor a session id hello would refuse (until 2026-11-30 it came in unscanned)
                    kept = replace(kept, session_id=None)
                    tally.count("notes_dropped")
                if self._secret_in({"forgotten_by": t.forgotten_by}) is not None:
                    # The name is required, and the tombstone is what keeps the memory forgotten
                    # (left out, an older archive could bring it back): the import, which brought
                    # it here, stands in (until 2026-11-30 the name came in unscanned).
                    kept = replace(kept, forgotten_by=Surface.IMPORT.value)
                    tally.count("notes_dropped")
                if tx is not None:
                    conn.execute(_INSERT_TOMBSTONE, astuple(kept))


def _control_in(revisions: Sequence[Revision], memory: Memory) -> str | None:
    """Why `memory` cannot be imported when one of the `revisions` to write holds a control
    character in its reason (refused in every reason since 2026-11-30, `governance.check_notes`)
    or a C1 control in its text (refused in every write since then), or it or one of them a
    control character in its session id (hello refuses one since then): a store from before may
    hold one - its memory stays out, the rest of its export comes in."""
    try:
        refuse_control("source", memory.source or "")
        refuse_control("session", memory.session_id or "", SESSION_CONTROL)
    except InvalidInput as e:
        return f"{e.message}; not imported"
    for r in revisions:
        texts = [("content", r.content), ("summary", r.summary), ("keywords", r.keywords)]
        texts += [("tags", tag) for tag in r.tags] + [("reason", r.reason)]
        try:
            for name, text in texts:
                refuse_control(name, text or "")
            refuse_control("session", r.session_id or "", SESSION_CONTROL)
        except InvalidInput as e:
            return f"revision {r.revision}: {e.message}; not imported"
    return None


@dataclass(frozen=True)
class _Facts:
    """What the store holds about one chunk's memories."""

    status: dict[str, str]
    buried: set[str]  # ids with a tombstone here
    buried_texts: set[str]  # content hashes with a tombstone here
    # of those, the ones only an expiry left: purged because their time was up, nobody forgot
    # them (until 2026-11-30 the report said "forgotten here" of them too)
    expired: set[str]
    expired_texts: set[str]
    history: dict[str, list[Revision]]
    keys: dict[str, str | None]  # memory id -> its dedupe key here
    same: dict[_TextKey, list[str]]  # live memories here holding a text this chunk adds
    hashes: dict[str, list[str]]  # memory id -> the content hash of each archived revision


def _gone(hashes: Sequence[str], facts: _Facts) -> str:
    """What became of these buried texts here: forgotten, unless only expiries buried them."""
    if all(h in facts.expired_texts for h in hashes):
        return "expired and was purged"
    return "was forgotten"


def remap(archive: Archive, mapping: Mapping[str, str], tally: Tally) -> Archive:
    """The archive with this store's workspace ids. A dedupe-key memory's id is derived from its
    workspace id, so one whose workspace has another id here takes the id this store would give
    it - or a later write with the same key could not find it."""
    if all(k == v for k, v in mapping.items()):
        return archive

    def ws(w: str | None) -> str | None:
        return mapping.get(w, w) if w is not None else None

    renamed: dict[str, str] = {}
    for am in archive.memories:
        m = am.memory
        if m.dedupe_key is not None and ws(m.workspace_id) != m.workspace_id:
            old = dedupe_memory_id(m.scope, m.workspace_id, m.session_id, m.dedupe_key)
            if m.id == old:
                renamed[m.id] = dedupe_memory_id(
                    m.scope, ws(m.workspace_id), m.session_id, m.dedupe_key
                )
                tally.note("renamed", {"archive_id": m.id, "id": renamed[m.id]})

    def mid(i: str) -> str:
        return renamed.get(i, i)

    memories = tuple(
        ArchivedMemory(
            replace(
                am.memory,
                id=mid(am.memory.id),
                workspace_id=ws(am.memory.workspace_id),
                superseded_by=mid(am.memory.superseded_by) if am.memory.superseded_by else None,
            ),
            tuple(
                replace(r, memory_id=mid(r.memory_id), workspace_id=ws(r.workspace_id))
                for r in am.revisions
            ),
            tuple(
                replace(link, from_id=mid(link.from_id), to_id=mid(link.to_id))
                for link in am.relations
            ),
        )
        for am in archive.memories
    )
    tombstones = tuple(replace(t, workspace_id=ws(t.workspace_id)) for t in archive.tombstones)
    return replace(archive, memories=memories, tombstones=tombstones)


def rename_old_names(
    archive: Archive, conn: sqlite3.Connection, tally: Tally
) -> tuple[Archive, old_names.Renames]:
    """The archive with the names a Cairn before 2026-11-30 let end in a line break (agent
    `helper\\n`, document `soul:helper\\n`, kind `decision\\n`) renamed as this store renamed
    them (`core/old_names.py`) - or, for a name it never held, as its migration would have: the
    name without the line break, or `NAME-2` when another agent here or in the archive holds it.
    So is an agent a Cairn before then let take a name Cairn keeps for itself (`human`, `cairn`):
    it becomes `human-2` where the archive names an agent (a memory's agent, its soul document)
    - where it names who acted, `human`, `notes`, `import` and `system` are the person and
    Cairn, and stay. Each rename is noted in the report; the caller remembers them in the store."""
    agents: set[str] = set()
    docs: set[str] = set()
    kinds: set[str] = set()
    reserved: set[str] = set()  # the agents named with a name Cairn keeps for itself
    for am in archive.memories:
        m = am.memory
        agents |= {m.agent} if m.agent is not None else set()
        reserved |= {m.agent} & RESERVED_AGENT_NAMES if m.agent is not None else set()
        agents |= {r.actor for r in am.revisions}
        agents |= {x for link in am.relations for x in (link.created_by, link.resolved_by) if x}
        kinds |= {m.kind} | {r.kind for r in am.revisions}
    agents |= {t.forgotten_by for t in archive.tombstones}
    for v in archive.identity:
        agents.add(v.author)
        if v.doc.startswith(old_names.SOUL):
            docs.add(v.doc[len(old_names.SOUL) :])
    reserved |= (agents & RESERVED_AGENT_NAMES) - set(OWN_ACTORS)  # `cairn`, `agent`: no actor
    reserved |= docs & RESERVED_AGENT_NAMES  # a soul document alone names its agent
    if not (
        reserved
        or any(old_names.old_shape(n) for n in agents)
        or any(old_names.old_doc(old_names.SOUL + d) for d in docs)
        or any(old_names.old_kind(k) for k in kinds)
    ):  # nearly every archive: no scan of the store's names for nothing
        return archive, old_names.Renames()
    renames = old_names.plan(
        agents,
        docs,
        kinds,
        taken=old_names.taken_names(conn) | agents | docs,
        known=old_names.recorded(conn),
        reserved=reserved,
    )
    if not renames:
        return archive, renames
    for item in renames.items():
        tally.note("names_renamed", item)
    a, k = renames.agent, renames.kind

    def actor(name: str) -> str:
        """Who acted: the person and Cairn keep their names (an old agent `human`'s own
        revisions cannot be told from the person's; they stay the person's)."""
        return name if name in OWN_ACTORS else a(name)

    def memory(am: ArchivedMemory) -> ArchivedMemory:
        m = am.memory
        return ArchivedMemory(
            replace(m, agent=a(m.agent) if m.agent is not None else None, kind=k(m.kind)),
            tuple(replace(r, actor=actor(r.actor), kind=k(r.kind)) for r in am.revisions),
            tuple(
                replace(
                    link,
                    created_by=actor(link.created_by),
                    resolved_by=actor(link.resolved_by) if link.resolved_by else None,
                )
                for link in am.relations
            ),
        )

    return replace(
        archive,
        memories=tuple(memory(am) for am in archive.memories),
        tombstones=tuple(
            replace(t, forgotten_by=actor(t.forgotten_by)) for t in archive.tombstones
        ),
        identity=tuple(
            replace(v, doc=renames.doc(v.doc), author=actor(v.author)) for v in archive.identity
        ),
    ), renames
