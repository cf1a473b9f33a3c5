"""A query as the engine runs it: its informative terms and symbols, alternatives for the words
the index never saw, and the SQL filters of one search (the caller's horizon and lifecycle, the
request's narrowing)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from core.horizon import horizon_sql
from core.model import Caller
from core.search_request import Horizon, SearchRequest
from core.search_stats import Stats, lookup_df
from core.spelling import alternatives
from core.tokenizer import Term, TermKind, analyze, is_stop


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]  # informative terms, de-duplicated, in order
    symbols: tuple[str, ...]
    # for words the index has never seen: the indexed terms they probably meant (see spelling)
    alternates: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def weights(self, alternate_weight: float) -> dict[str, float]:
        """Term -> weight: the query's own terms 1.0, alternates for unknown words less."""
        out = {t.text: 1.0 for t in self.terms}
        for alts in self.alternates.values():
            for alt in alts:
                out.setdefault(alt, alternate_weight)
        return out

    def groups(self) -> list[tuple[str, ...]]:
        """For each term, the terms that count as holding it (itself and its alternates)."""
        return [(t.text, *self.alternates.get(t.text, ())) for t in self.terms]


def parse(text: str) -> Query:
    seen: dict[str, Term] = {}
    for term in analyze(text):
        # A cluster inside a longer Thai, Lao, Khmer or Myanmar run is a letter of the query's
        # word: its pairs look for the word (`TermKind.CLUSTER_PART`).
        if term.kind is TermKind.CLUSTER_PART:
            continue
        if not is_stop(term) and term.text not in seen:
            seen[term.text] = term
    # A query of stopwords alone has nothing to look for: they are never indexed, and the
    # spelling step would only turn them into other words ("what" -> "wheat").
    terms = tuple(seen.values())
    return Query(terms, tuple(t.text for t in terms if t.is_symbol))


@dataclass(frozen=True)
class Where:
    """The horizon and lifecycle filters of one search, as SQL on `memory m` and parameters."""

    sql: str
    params: list[Any]

    def and_(self, other: Where) -> Where:
        return Where(f"{self.sql} AND {other.sql}", [*self.params, *other.params])


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def filters(caller: Caller, req: SearchRequest, now: int) -> Where:
    """What the caller may see: its horizon and the lifecycle (statuses, expiry)."""
    params: list[Any] = []
    clauses = ["1"]
    if req.horizon is not Horizon.ALL:
        horizon, horizon_params = horizon_sql(caller)
        clauses, params = [horizon], list(horizon_params)
    statuses = ["active", "archived"] + (["superseded"] if req.include_history else [])
    clauses.append(f"m.status IN ({', '.join(repr(s) for s in statuses)})")
    if not req.include_expired:
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        params.append(now)
    return Where(" AND ".join(clauses), params)


def narrowing(req: SearchRequest) -> Where:
    """The request's own narrowing - kinds, scopes, tiers, and a person's statuses, agents
    and workspaces - within what the caller sees (a dispute with a side it leaves out stays
    marked)."""
    clauses = ["1"]
    params: list[Any] = []
    for column, values in (
        ("m.status", sorted(s.value for s in req.statuses)),
        ("m.kind", sorted(req.kinds)),
        ("m.scope", sorted(s.value for s in req.scopes)),
        ("m.tier", sorted(t.value for t in req.tiers)),
        ("m.agent", sorted(req.agents)),
        ("m.workspace_id", sorted(req.workspace_ids)),
    ):
        if values:
            clauses.append(f"{column} IN ({', '.join('?' for _ in values)})")
            params.extend(values)
    return Where(" AND ".join(clauses), params)


def correct(conn: Any, q: Query, stats: Stats, where: Where, *, words: int) -> tuple[Query, int]:
    """Alternatives for the query's words that match nothing in the index (typos,
    abbreviations), for the first `words` of them (the query and how many were looked up);
    symbols and numbers are exact and never corrected.

    The alternatives come from every workspace's words. When none of a word's is in a
    memory the caller may find, they are chosen again from the words its own memories hold:
    another workspace's near words never take the places of the caller's."""
    alternates: dict[str, tuple[str, ...]] = {}
    unknown = [
        t.text
        for t in q.terms
        if t.kind in (TermKind.WORD, TermKind.PART) and stats.df.get(t.text, 0) == 0
    ][:words]
    for word in unknown:
        found = tuple(alternatives(conn, word))
        if found and not findable(conn, found, where):
            found = tuple(alternatives(conn, word, keep=lambda t: findable(conn, (t,), where)))
        if found:
            alternates[word] = found
    if not alternates:
        return q, len(unknown)
    lookup_df(conn, stats, [a for alts in alternates.values() for a in alts])
    return replace(q, alternates=alternates), len(unknown)


def findable(conn: Any, terms: Sequence[str], where: Where) -> bool:
    """Whether a memory the search may return holds any of `terms`."""
    match = " OR ".join(quote(t) for t in terms)
    row = conn.execute(
        "SELECT 1 FROM memory_fts JOIN memory m ON m.seq = memory_fts.rowid "
        f"WHERE memory_fts MATCH ? AND {where.sql} LIMIT 1",
        [match, *where.params],
    ).fetchone()
    return row is not None
