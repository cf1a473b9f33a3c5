"""Contradictions between memories: opening one, a person resolving it, and closing those of a
memory that is forgotten or purged."""

from __future__ import annotations

from core import audit, relations
from core.clock import Clock
from core.errors import Conflict, Forbidden, InvalidInput, NotFound
from core.governance import Gate
from core.horizon import visible
from core.model import Caller, Relation, RelationKind, Status
from core.records import fetch_memory
from core.revisions import Revisions
from core.store import Store
from core.supersession import Supersession
from core.writer import WriteTx


class Contradictions:
    """Contradictions, for `MemoryService` and the parts that forget and purge memories."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        gate: Gate,
        revisions: Revisions,
        supersession: Supersession,
    ) -> None:
        self._store = store
        self._clock = clock
        self._gate = gate
        self._revisions = revisions
        self._supersession = supersession

    def close_contradictions(
        self, tx: WriteTx, caller: Caller, memory_id: str, how: str, now: int
    ) -> int:
        """`memory_id` is being forgotten or purged (`how`): the contradictions it is in close
        (there is nothing left to weigh the other side against), each on the record of the
        memory left standing. Returns how many closed."""
        closed = relations.close_contradictions_of(
            tx.conn, memory_id, resolution=how, at=now, by=caller.actor
        )
        for rel in closed:
            other_id = rel.to_id if rel.from_id == memory_id else rel.from_id
            audit.record(
                tx,
                caller,
                "resolve",
                memory_id=other_id,
                memory=fetch_memory(tx.conn, other_id, now),
                detail={"relation": rel.id, "resolution": how, "other": memory_id},
                at=now,
            )
        return len(closed)

    def mark_contradiction(
        self, caller: Caller, a_id: str, b_id: str, note: str | None = None
    ) -> Relation:
        """Record that two memories contradict; it stays open until a person resolves it.

        Raises:
            InvalidInput: a memory by itself, or a secret in the note (`reason_code: secret`).
            Conflict: a side has expired (until 2026-11-30 it was taken, and the contradiction
                stayed open until the purge).
        """
        if a_id == b_id:
            raise InvalidInput("a memory cannot contradict itself")
        self._gate.refuse_secret({"note": note})

        def job(tx: WriteTx) -> Relation:
            now = self._clock.now_ms()
            a = self._revisions.load_for_change(tx, caller, a_id, now)
            b = self._revisions.load_for_change(tx, caller, b_id, now)
            for side in (a, b):
                if side.expired:  # hidden already, and purged soon: nothing to weigh
                    raise Conflict(
                        f"memory {side.id} has expired; only memories that have not can "
                        "contradict each other",
                        data={"id": side.id, "expired": True},
                    )
            rel_id = relations.open_contradiction(
                tx.conn, a.id, b.id, note=note, at=now, by=caller.actor
            )
            audit.record(
                tx,
                caller,
                "contradict",
                memory=a,
                detail={"other": b.id, "relation": rel_id},
                at=now,
            )
            return relations.fetch_relation(tx.conn, rel_id)

        return self._store.writer.run(job)

    def resolve_contradiction(
        self, caller: Caller, relation_id: int, keep: str, note: str | None = None
    ) -> Relation:
        """A person closes a contradiction: keep `from`, keep `to` (the other is superseded by
        it), or `both` (they do not really conflict)."""
        if not caller.is_human:
            raise Forbidden("only a person can resolve a contradiction")
        if keep not in ("from", "to", "both"):
            raise InvalidInput("keep must be 'from', 'to' or 'both'", data={"field": "keep"})
        self._gate.refuse_secret({"note": note})

        def job(tx: WriteTx) -> Relation:
            now = self._clock.now_ms()
            rel = relations.fetch_relation(tx.conn, relation_id)
            if rel.kind is not RelationKind.CONTRADICTS or not rel.open:
                raise Conflict(f"relation {relation_id} is not an open contradiction")
            if keep != "both":
                winner, loser = (
                    (rel.from_id, rel.to_id) if keep == "from" else (rel.to_id, rel.from_id)
                )
                self._refuse_to_keep(tx, caller, winner, now)
                old = self._revisions.load_for_change(tx, caller, loser, now)
                if old.status in (Status.ACTIVE, Status.ARCHIVED):
                    self._supersession.mark_superseded(
                        tx, caller, old, by=winner, note=note, now=now
                    )
            relations.close_contradiction(tx.conn, relation_id, keep=keep, at=now, by=caller.actor)
            # The event carries the memory's scope, so the live push and `changes.since` show
            # it to the same connections.
            subject = fetch_memory(tx.conn, rel.from_id, now)
            audit.record(
                tx,
                caller,
                "resolve",
                memory_id=rel.from_id,
                memory=subject,
                detail={"relation": relation_id, "keep": keep},
                at=now,
            )
            return relations.fetch_relation(tx.conn, relation_id)

        return self._store.writer.run(job)

    def _refuse_to_keep(self, tx: WriteTx, caller: Caller, memory_id: str, now: int) -> None:
        """Raise unless `memory_id` can be kept over the other side of a contradiction: the other
        becomes superseded by it, which hides it, so only a live (active) memory may win."""
        kept = fetch_memory(tx.conn, memory_id, now)
        if kept is None or not visible(caller, kept):
            raise NotFound(
                f"memory {memory_id} (the side to keep) not found",
                data={"id": memory_id, "field": "keep"},
            )
        if kept.status is not Status.ACTIVE:
            raise Conflict(
                f"memory {memory_id} is {kept.status.value}; only an active memory can be kept "
                "over another (keep 'both' to close the contradiction)",
                data={"id": memory_id, "status": kept.status.value, "field": "keep"},
            )
        if kept.expired:
            raise Conflict(
                f"memory {memory_id} has expired (it waits for its purge); only a live memory "
                "can be kept over another (keep 'both' to close the contradiction)",
                data={
                    "id": memory_id,
                    "status": kept.status.value,
                    "expired": True,
                    "field": "keep",
                },
            )
