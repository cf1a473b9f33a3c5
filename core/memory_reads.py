"""Reading memories as a caller may: one with its history, a page of them, the change feed.
Every memory leaves through the redactor, so what a model can read never carries a span the
scanner flags; a person may ask for a memory's raw text, and each such read is audited."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core import audit, audit_actions, relations
from core.changes import Change
from core.clock import Clock
from core.errors import Forbidden, NotFound
from core.governance import Redactor
from core.horizon import horizon_sql, visible
from core.listing import check_limit, decode_cursor, encode_cursor, filter_digest, list_query
from core.model import Caller, ListFilter, Memory, MemoryDetail, Page, Relation, Status
from core.records import fetch_memory, fetch_revisions, memory_from_row
from core.store import Store
from core.writer import WriteTx


@dataclass(frozen=True)
class ChangeFeed:
    changes: tuple[Change, ...]
    last_seq: int
    gap: bool  # the caller's seq is older than the oldest event still in the database


class MemoryReader:
    def __init__(self, store: Store, clock: Clock, redactor: Redactor) -> None:
        self._store = store
        self._clock = clock
        self._redactor = redactor

    def get(
        self, caller: Caller, memory_id: str, *, history: bool = False, raw: bool = False
    ) -> MemoryDetail:
        """One memory (with its revisions and relations when `history`), as a model may read
        it: spans the scanner flags are replaced by `[BLOCKED: rule]` - in the revisions'
        reasons and the relations' notes too. A person may ask for the
        `raw` text; each raw read of a memory the scanner flags is audited.

        Raises:
            NotFound: no such memory in the caller's horizon (another workspace's memory looks
                exactly like one that does not exist).
            Forbidden: `raw` from an agent.
        """
        if raw and not caller.is_human:
            raise Forbidden("only a person can read a memory's raw text")
        now = self._clock.now_ms()
        with self._store.read_db.atomic():
            conn = self._store.read_db.conn()
            memory = fetch_memory(conn, memory_id, now)
            if (
                memory is None
                or not visible(caller, memory)
                or (memory.status is Status.FORGOTTEN and not caller.is_human)
            ):
                raise NotFound(f"memory {memory_id} not found", data={"id": memory_id})
            revisions = tuple(fetch_revisions(conn, memory_id)) if history else ()
            links = tuple(relations.relations_of(conn, memory_id)) if history else ()
        shown = self._redactor.memory(memory)
        if raw:
            if shown is not memory:
                self._audit_raw_read(caller, memory)
            return MemoryDetail(memory, revisions, links)
        revisions = tuple(self._redactor.revision(r) for r in revisions)
        links = tuple(self._redactor.relation(r) for r in links)
        return MemoryDetail(shown, revisions, links)

    def _audit_raw_read(self, caller: Caller, memory: Memory) -> None:
        def job(tx: WriteTx) -> None:
            audit.record(
                tx,
                caller,
                "read_raw",
                memory=memory,
                at=self._clock.now_ms(),
            )

        self._store.writer.run(job)

    def relations(self, caller: Caller, memory_id: str) -> tuple[Relation, ...]:
        self.get(caller, memory_id)
        found = relations.relations_of(self._store.read_db.conn(), memory_id)
        return tuple(self._redactor.relation(r) for r in found)

    def list(
        self,
        caller: Caller,
        flt: ListFilter | None = None,
        *,
        limit: int = 50,
        cursor: str | None = None,
    ) -> Page:
        """Memories newest first, one page at a time; pages stay stable under concurrent writes.

        Raises:
            InvalidInput: a bad limit, or a cursor that was not issued for these filters.
        """
        flt = flt or ListFilter()
        check_limit(limit)
        digest = filter_digest(flt)
        after = decode_cursor(cursor, digest) if cursor else None
        now = self._clock.now_ms()
        sql, args = list_query(caller, flt, now_ms=now, after_seq=after, limit=limit)
        rows = self._store.read_db.conn().execute(sql, args).fetchall()
        items = tuple(self._redactor.memory(memory_from_row(r, now)) for r in rows[:limit])
        more = len(rows) > limit
        return Page(items, encode_cursor(int(rows[limit - 1][1]), digest) if more else None)

    def changes_since(self, caller: Caller, seq: int, *, limit: int = 500) -> ChangeFeed:
        """Audited changes after `seq`, oldest first - for an agent, only those on memories it
        can see. `gap` says events after `seq` were already rotated out of the database."""
        conn = self._store.read_db.conn()
        # A purged memory's row is gone; its tombstone keeps where it lived, so its events
        # (the purge included) still reach an agent catching up.
        events = (
            "SELECT a.seq, a.action, a.memory_id, a.revision, a.actor, "
            "coalesce(m.workspace_id, t.workspace_id) AS workspace_id, "
            "coalesce(m.scope, t.scope) AS scope, "
            "coalesce(m.session_id, t.session_id) AS session_id FROM audit a "
            "LEFT JOIN memory m ON m.id = a.memory_id "
            "LEFT JOIN tombstone t ON m.id IS NULL AND t.memory_id = a.memory_id "
            "WHERE a.seq > ?"
        )
        if caller.is_human:
            sql = f"{events} ORDER BY a.seq LIMIT ?"
            args: list[Any] = [seq, limit]
        else:
            where, params = horizon_sql(caller, alias="v")
            allowed = sorted(audit_actions.AGENT_ACTIONS)
            sql = (
                f"SELECT * FROM ({events}) v WHERE v.memory_id IS NOT NULL AND {where} "
                f"AND v.action IN ({', '.join('?' * len(allowed))}) ORDER BY v.seq LIMIT ?"
            )
            args = [seq, *params, *allowed, limit]
        # The changes, the oldest left and the newest: one snapshot. (Until 2026-11-30 the oldest
        # was read before it, and a rotation committing in between skipped events unreported.)
        with self._store.read_db.atomic():
            rows = conn.execute(sql, args).fetchall()
            oldest, newest = conn.execute(
                "SELECT min(seq), coalesce(max(seq), 0) FROM audit"
            ).fetchone()
        # From the start (seq 0) too: events 1 .. oldest - 1 are gone (until 2026-11-30 a reader
        # from the start was never told).
        gap = oldest is not None and max(seq, 0) < int(oldest) - 1
        changes = tuple(
            Change(
                seq=int(r[0]),
                action=r[1],
                topics=audit_actions.topics_for(r[1]),
                memory_id=r[2],
                revision=r[3],
                workspace_id=r[5],
                actor=r[4],
                scope=r[6],
                session_id=r[7],
            )
            for r in rows
        )
        # A full page resumes after its last change. A page that is not full holds every change
        # this caller may see up to the newest one the snapshot holds: resuming from that one
        # skips nothing (an agent that sees none of them moves on, instead of scanning them all
        # again at every call), and never runs ahead of what is committed.
        # (Asked from beyond the store, the answer is its newest change.)
        last = changes[-1].seq if len(changes) == limit else int(newest)
        return ChangeFeed(changes, last, gap)
