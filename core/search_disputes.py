"""Disputes in a search's results: the other side of each open contradiction, returned right
after the result it contradicts when the caller may see it, and both marked `disputed_with`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.model import Memory, Relation
from core.records import SELECT_MEMORY, memory_from_row
from core.search_query import Where
from core.search_result import SearchHit


def find_partners(
    conn: Any,
    contradictions: list[Relation],
    found: dict[int, Memory],
    *,
    visible: Where,
    where: Where,
    now: int,
) -> tuple[dict[str, Memory], set[str]]:
    """The other side of each open contradiction that the results do not already hold:
    returned beside it when it passes the request's filters (`where`), and named (the
    second value) whenever the caller may see it (`visible`) - a kinds, scopes or tiers
    filter leaving it out does not make the dispute go away."""
    have = {m.id for m in found.values()}
    missing = sorted(
        {other for rel in contradictions for other in (rel.from_id, rel.to_id) if other not in have}
    )
    if not missing:
        return {}, set()
    marks = ", ".join("?" for _ in missing)
    nameable = {
        r[0]
        for r in conn.execute(
            f"SELECT m.id FROM memory m WHERE m.id IN ({marks}) AND {visible.sql}",
            [*missing, *visible.params],
        )
    }
    if not nameable:
        return {}, nameable
    marks = ", ".join("?" for _ in nameable)
    rows = conn.execute(
        SELECT_MEMORY + f" WHERE m.id IN ({marks}) AND {where.sql}", [*nameable, *where.params]
    ).fetchall()
    return {r[0]: memory_from_row(r, now) for r in rows}, nameable


def mark_disputes(
    hits: list[SearchHit], partners: dict[str, Memory], contradictions: list[Relation]
) -> list[SearchHit]:
    if not contradictions:
        return hits
    others: dict[str, set[str]] = {}
    for rel in contradictions:
        others.setdefault(rel.from_id, set()).add(rel.to_id)
        others.setdefault(rel.to_id, set()).add(rel.from_id)
    out: list[SearchHit] = []
    placed: set[str] = set()
    for h in hits:
        mid = h.memory.id
        if mid not in others:
            out.append(h)
            continue
        out.append(replace(h, disputed_with=tuple(sorted(others[mid]))))
        placed.add(mid)
        for other_id in sorted(others[mid]):
            partner = partners.get(other_id)
            if partner is not None and other_id not in placed:
                out.append(SearchHit(partner, 0.0, disputed_with=tuple(sorted(others[other_id]))))
                placed.add(other_id)
    return out
