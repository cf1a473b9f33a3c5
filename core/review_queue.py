"""Proposals coming into the review queue: a proposal seen again bumps the one waiting, and the
queue keeps to its size by evicting the least-seen oldest."""

from __future__ import annotations

from collections.abc import Sequence

from core import audit, suggestions
from core.model import Caller, Memory
from core.settings import Settings
from core.similarity import NearDuplicates, TermSets
from core.suggestions import Suggestion
from core.writer import WriteTx


class ReviewQueue:
    """Puts proposals in the queue: a proposal seen again bumps the one waiting (a strictly more
    complete text replaces it), and beyond `review.max_items` the least-seen oldest go - each
    eviction recorded and counted, never silent."""

    def __init__(self, settings: Settings, near: NearDuplicates) -> None:
        self._cap = settings.integer("review.max_items")
        self._near = near
        # The waiting texts' term sets: room for the whole queue and as much again.
        self._terms = TermSets(limit=2 * self._cap)

    # As a memory observer: a forgotten memory, or an expired one purged, takes its waiting
    # proposals with it - nothing is left to adopt them onto (until 2026-11-30 a purge left them
    # waiting for good, refused on adoption and counted by health).
    def memories_written(
        self, tx: WriteTx, memories: Sequence[Memory], *, fresh: bool = False
    ) -> None:
        return

    def memories_removed(self, tx: WriteTx, memory_ids: Sequence[str], *, forgotten: bool) -> None:
        tx.conn.executemany(
            "DELETE FROM suggestion WHERE target_id = ? OR replacement_id = ?",
            [(mid, mid) for mid in memory_ids],
        )

    def propose(self, tx: WriteTx, caller: Caller, suggestion: Suggestion) -> Suggestion:
        conn = tx.conn
        now = suggestion.last_seen
        waiting = suggestions.find_same(conn, suggestion, self._near.idf(), self._terms)
        if waiting is not None:
            kept = suggestions.bump(conn, waiting, suggestion, now)
            action = "reobserve"
        else:
            suggestions.insert(conn, suggestion)
            kept = suggestion
            action = "propose"
        evicted = suggestions.evict_over(conn, self._cap, keep=kept.id)
        for gone in evicted:
            suggestions.record_decision(conn, gone, "evicted", by="cairn", at=now)
        audit.record(
            tx,
            caller,
            action,
            detail={"suggestion": kept.id, "op": kept.op.value, "hits": kept.hits},
            at=now,
        )
        if evicted:
            suggestions.bump_counter(conn, "review_evicted", len(evicted))
            audit.record(
                tx,
                Caller.system(),
                "review_evicted",
                detail={"count": len(evicted), "suggestions": [g.id for g in evicted]},
                at=now,
            )
        return suggestions.with_history(conn, kept)
