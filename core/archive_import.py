"""Bringing a read and verified archive (`core/archive_reader.py`) into the store: what is not
there yet - memories with their revisions, relations, identity versions, workspaces and
tombstones - without ever touching what the store already holds.

The same planning code runs for a dry run (on a read transaction, writing nothing) and for the real
import (inside writer jobs, a chunk of memories per job, each memory with all its revisions in one
transaction), so a dry run reports exactly what the import would do. Each chunk is read from the
archive as it is asked for (`core/archive_memories.py`); what is kept from one chunk to the next
is ids and digests, not memories.

The archive is first put in this store's terms (`core/archive_renames.py`); each decision reads
what the store holds (`core/archive_facts.py`) and what an archive's fields may not bring
(`core/archive_refusals.py`), and the outcome is tallied into the report
(`core/archive_report.py`).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import astuple, replace
from typing import NamedTuple

from core import audit
from core.archive_facts import (
    LIVE_IDS,
    STATUS_OF,
    TOMBSTONED_IDS,
    Facts,
    TextKey,
    chunk_facts,
    gone,
    id_list,
    live_text,
)
from core.archive_reader import Archive
from core.archive_records import ArchivedMemory
from core.archive_refusals import (
    SecretScan,
    control_in,
    identity_refusal,
    note_refused,
    secret_of,
    tombstone_as_kept,
)
from core.archive_renames import keys_as_now, remap
from core.archive_report import Tally
from core.clock import Clock
from core.dedupe import dedupe_holder
from core.errors import InvalidInput
from core.identity import IdentityVersion, insert_version
from core.model import Caller, RelationKind, Status, Surface
from core.records import (
    insert_memories,
    insert_revisions,
    memory_values,
    next_memory_seq,
    replace_memory,
    revision_row,
)
from core.revisions import MemoryObserver
from core.validation import content_hash, control_in_path
from core.workspace import new_workspace_id
from core.writer import WriteTx

CHUNK = 500

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


def _mark(key: TextKey) -> bytes:
    """A text's key (`live_text`) as 16 bytes that tell it from every other: what the import
    holds of each memory's text while it runs."""
    return hashlib.blake2b("\x00".join(key).encode("utf-8"), digest_size=16).digest()


class _Landing(NamedTuple):
    """What `stranded` asks of a memory that lands, as the store will hold it."""

    status: Status
    expires_at: int | None
    superseded_by: str | None


class Placement:
    """One import - or dry run - of one archive into one store. Each step decides against `conn`
    (a read transaction for a dry run, the write transaction otherwise) and, given the write
    job's `tx`, does what it decided; the decisions never depend on which."""

    def __init__(
        self,
        archive: Archive,
        tally: Tally,
        observers: Sequence[MemoryObserver],
        secret_in: SecretScan,
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
        self._ids = frozenset(archive.memories.ids)
        self._forgotten_there = frozenset(t.memory_id for t in archive.tombstones)
        # added or appended: what `stranded` asks of each as the store will hold it
        self._landing: dict[str, _Landing] = {}
        # An exact duplicate is one memory in Cairn, in an archive as in a write: the texts the
        # memories decided so far bring (-> the memory bringing it), and the archive's memories
        # whose copy here stays as it is. Texts are held as `_mark`s: a two-year archive's
        # 100,000 keys took some 40 MB.
        self._texts: dict[bytes, str] = {}
        self._kept: set[str] = set()
        # where each memory read so far keeps its text live, as of `_texts_at` (`workspaces`)
        self._archived_texts: dict[str, bytes | None] = {}
        self._texts_at = 0
        self._held: frozenset[int] = frozenset()  # the lines of memories this store holds
        # workspace id -> why its memories stay out: a folder this store does not register
        self._unplaced: dict[str, str] = {}

    def chunks(self, size: int = CHUNK) -> Iterator[Sequence[ArchivedMemory]]:
        """The archive's memories, `size` at a time, read from the archive as each chunk is
        asked for: those this store holds first (`_held_first`, once `workspaces` ran)."""
        part: list[ArchivedMemory] = []
        for am in self.archive.memories.read(self._held):
            part.append(am)
            if len(part) == size:
                yield part
                part = []
        if part:
            yield part

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
        self.archive = keys_as_now(self.archive, conn, tally)
        self._ids = frozenset(self.archive.memories.ids)
        self._held_first(conn)
        self._texts_at = self._clock.now_ms()

    def _held_first(self, conn: sqlite3.Connection) -> None:
        """The archive's memories this store holds before the new ones (each group in the
        file's order): whether a held memory keeps its text here is decided before a new memory
        holding that text is - so the outcome does not depend on the order of the lines (until
        2026-11-30 a new memory before a held one with another history landed beside it)."""
        held = {str(r[0]) for r in conn.execute(STATUS_OF, (id_list(set(self._ids)),))}
        self._held = frozenset(i for i, mid in enumerate(self.archive.memories.ids) if mid in held)

    def memories(
        self, conn: sqlite3.Connection, chunk: Sequence[ArchivedMemory], tx: WriteTx | None
    ) -> None:
        """Decide each memory of one chunk - add, append revisions, unchanged, skip, conflict -
        and, inside a write job, do it (each memory with all its revisions)."""
        for am in chunk:
            key = live_text(am.memory, self._texts_at)
            self._archived_texts[am.memory.id] = None if key is None else _mark(key)
        facts = chunk_facts(conn, chunk, self._clock)
        adds: list[ArchivedMemory] = []
        appends: list[tuple[ArchivedMemory, int]] = []
        for am in chunk:
            outcome, detail = self._decide(conn, am, facts)
            if outcome in ("add", "append"):
                writing = am.revisions[0 if outcome == "add" else int(detail) :]
                control = control_in(writing, am.memory)
                secret = secret_of(am, writing, self._secret_in) if control is None else None
                if control is not None:
                    outcome, detail = "conflict", control
                elif secret is not None:
                    outcome, detail = "secret", secret
            if outcome == "secret":
                self._tally.count("refused")
                self._tally.note("secrets", {"id": am.memory.id, "reason": detail})
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

    def _hold_text(self, am: ArchivedMemory, outcome: str, facts: Facts) -> None:
        """Note what `am` leaves live once decided: itself and its text when it lands; that
        this store's copy stays as it is otherwise (its text is the store's)."""
        m = am.memory
        mid = m.id
        if outcome in ("add", "append"):
            self._landing[mid] = _Landing(m.status, m.expires_at, m.superseded_by)
            key = live_text(m, self._clock.now_ms())
            if key is not None:
                self._texts.setdefault(_mark(key), mid)
        elif mid in facts.status:
            self._kept.add(mid)

    def _decide(
        self, conn: sqlite3.Connection, am: ArchivedMemory, facts: Facts
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
    def _decide_held(conn: sqlite3.Connection, am: ArchivedMemory, facts: Facts) -> tuple[str, str]:
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
            return "skip", f"a later revision holds text that {gone(buried, facts)} here"
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
        self, conn: sqlite3.Connection, am: ArchivedMemory, facts: Facts
    ) -> tuple[str, str]:
        m = am.memory
        buried = [h for h in facts.hashes[m.id] if h in facts.buried_texts]
        if buried:
            return "skip", f"holds text that {gone(buried, facts)} here"
        if m.dedupe_key is not None:
            holder = dedupe_holder(conn, m)
            if holder is not None:
                return "conflict", f"{holder} here has the same dedupe key; kept it"
        key = live_text(m, self._clock.now_ms())
        if key is None:
            return "add", ""
        mark = _mark(key)
        for held in facts.same.get(key, ()):
            # one of the archive's memories keeps its text here when the import leaves its copy
            # as it is (decided so: held memories are decided first, `_held_first`), or when the
            # archive's copy holds that text too
            archived = self._archived_texts.get(held)
            if held not in self._ids or held in self._kept or archived == mark:
                return "conflict", f"the same text is already here as {held}; kept that one"
        if mark in self._texts:
            return "conflict", (
                f"the archive holds the same text as {self._texts[mark]}, which lands; an exact "
                "duplicate is one memory"
            )
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
        links = list(self.archive.memories.links(self._held))
        ends = {link.from_id for link in links} | {link.to_id for link in links}
        live = {str(r[0]) for r in conn.execute(LIVE_IDS, (id_list(ends),))} | tally.added_ids
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
            if note_refused(note, self._secret_in):
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
            (mid, m.superseded_by)
            for mid, m in self._landing.items()
            if m.status is Status.SUPERSEDED and m.superseded_by and not expired(m.expires_at)
        ]
        targets = {by for _mid, by in candidates}
        held = {
            str(r[0]): (str(r[1]), r[2])
            for r in conn.execute(
                "SELECT m.id, m.status, m.expires_at FROM memory m "
                "JOIN json_each(?) j ON j.value = m.id",
                (id_list(targets),),
            )
        }
        out: list[tuple[str, str]] = []
        for mid, by in candidates:
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
            self._tally.note("released", {"id": mid, "reason": reason})
            out.append((mid, reason))
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
                    refusal = identity_refusal(
                        v,
                        self._secret_in,
                        current=v.version == newest,
                        max_bytes=self._identity_max_bytes,
                    )
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

    def tombstones(self, conn: sqlite3.Connection, tx: WriteTx | None) -> None:
        """Tombstones are added (never touching content); one naming a memory this store still
        holds is reported instead - only a person here can forget it."""
        tally = self._tally
        ids = {t.memory_id for t in self.archive.tombstones}
        have = {str(r[0]) for r in conn.execute(TOMBSTONED_IDS, (id_list(ids),))}
        live = {str(r[0]) for r in conn.execute(LIVE_IDS, (id_list(ids),))} | tally.added_ids
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
                kept, dropped = tombstone_as_kept(t, self._secret_in)
                if dropped:
                    tally.count("notes_dropped", dropped)
                if tx is not None:
                    conn.execute(_INSERT_TOMBSTONE, astuple(kept))
