"""Ranking one search's candidates: BM25F with pseudo-relevance feedback (the scorer is
core/ranking.py's), fusion of several queries' rankings, coverage, hits, the bounded rerank and
presence."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from core.clock import after_now
from core.model import Memory, Status
from core.ranking import Bm25F, DocTerms, feedback_candidates, feedback_terms
from core.search_config import EngineConfig
from core.search_query import Query
from core.search_result import Presence, SearchHit
from core.search_stats import Stats, lookup_df


def best_first(scored: Iterable[tuple[int, float]]) -> list[tuple[int, float]]:
    """(seq, score) pairs, best score first; on a tie, the older memory (lower seq) first, so
    one store gives one order in every process (scores are summed in the query's order:
    `ranking.Bm25F.scores`)."""
    return sorted(scored, key=lambda x: (-x[1], x[0]))


def rank(
    conn: Any,
    q: Query,
    pool: list[int],
    docs: dict[int, DocTerms],
    stats: Stats,
    *,
    config: EngineConfig,
) -> list[tuple[int, float]]:
    """Order a candidate pool by BM25F, then again with the query expanded by the words its
    best first-pass matches share (pseudo-relevance feedback)."""
    c = config
    scorer = Bm25F(
        c.k1,
        c.b,
        (c.weight_content, c.weight_summary, c.weight_tags, c.weight_keywords),
        stats.avg_lengths,
    )
    query = q.weights(c.alternate_weight)
    term_idf = {t: stats.idf(t) for t in query}
    seqs = [seq for seq in dict.fromkeys(pool) if seq in docs]
    pooled = [docs[seq] for seq in seqs]
    shapes = [scorer.shape(doc.lengths) for doc in pooled]
    scores, held = scorer.scores(pooled, shapes, query, term_idf)
    first = best_first(zip(seqs, scores, strict=True))
    if c.feedback_docs <= 0 or c.feedback_terms <= 0 or len(first) < 2:
        return first
    top = [(docs[seq], score) for seq, score in first[: c.feedback_docs]]
    words = feedback_candidates(
        top, query, depth=c.feedback_docs, count=c.feedback_terms * c.feedback_pool
    )
    lookup_df(conn, stats, words)
    words_idf = {t: stats.idf(t) for t in words if stats.df.get(t, 0) > 0}
    expansion = feedback_terms(words, words_idf, c.feedback_terms)
    if not expansion:
        return first
    # BM25F adds up over terms: the expanded score is the first score plus the expansion's.
    extra = {t: c.feedback_weight for t in expansion}
    term_idf.update({t: words_idf[t] for t in expansion})
    expanded, _ = scorer.scores(pooled, shapes, extra, term_idf)
    boost = c.coverage_boost
    if not boost:
        return best_first(
            (seq, score + more) for seq, score, more in zip(seqs, scores, expanded, strict=True)
        )
    # Coverage follows from which of the query's terms a memory holds (the first pass found
    # them): worked out once for each combination the pool shows.
    coverage = _coverage_by_terms(q, list(query), stats, held)
    return best_first(
        (seq, (score + more) * (1.0 + boost * coverage[terms]))
        for seq, score, more, terms in zip(seqs, scores, expanded, held, strict=True)
    )


def fuse(
    rankings: list[list[tuple[int, float]]],
    queries: list[Query],
    docs: dict[int, DocTerms],
    stats: Stats,
    *,
    config: EngineConfig,
) -> dict[int, float]:
    """One ranking as it is. Several: reciprocal rank fusion where each list's vote is
    weighted by how much of that list's query the memory covers, so a variant's full match
    outweighs the original query's one-word match (variants weigh `variant_weight`)."""
    if len(rankings) == 1:
        return dict(rankings[0])
    fused: dict[int, float] = {}
    for i, (ranking, q) in enumerate(zip(rankings, queries, strict=True)):
        weight = 1.0 if i == 0 else config.variant_weight
        for rank, (seq, _) in enumerate(ranking):
            doc = docs.get(seq)
            coverage = coverage_of(q, doc, stats) if doc else 0.0
            fused[seq] = fused.get(seq, 0.0) + weight * coverage / (config.rrf_k + rank + 1)
    return dict(best_first(fused.items()))


def make_hit(
    memory: Memory,
    *,
    score: float,
    pinned_by: tuple[str, ...],
    doc: DocTerms | None,
    queries: list[Query],
    stats: Stats,
    variant_discount: float,
) -> SearchHit:
    if doc is None:
        return SearchHit(memory, score, pinned_by)
    # A variant is the agent's own rephrasing, not the question: its match counts for less.
    coverage = max(
        (
            coverage_of(q, doc, stats) * (1.0 if i == 0 else variant_discount)
            for i, q in enumerate(queries)
        ),
        default=0.0,
    )
    enrichment_only = coverage > 0 and all(
        coverage_of(q, doc, stats, enrichment=False) == 0 for q in queries
    )
    return SearchHit(memory, score, pinned_by, coverage, enrichment_only)


def bounded_rerank(hits: list[SearchHit], now: int, *, config: EngineConfig) -> list[SearchHit]:
    """Let importance, the human's pin and recency (a change in the last `recent_days`, not
    after `now`) move a hit up at most `rerank_max_shift` places, within the exact-pinned group
    and within the rest; membership never changes."""
    shift = config.rerank_max_shift
    recent = config.recent_days * 86_400_000

    def bonus(hit: SearchHit) -> int:
        m = hit.memory
        if m.status is not Status.ACTIVE or m.expired:
            return 0
        # never a change "after now" (the clock ran ahead when it was made): recent for years
        fresh = now - m.updated_at <= recent and not after_now(m.updated_at, now)
        steps = (m.importance >= 4) + m.pinned + fresh
        return min(shift, int(steps))

    def rerank(group: list[SearchHit]) -> list[SearchHit]:
        # A hit with bonus b sorts at (rank - b - 0.5): it passes at most b hits, and any hit
        # is passed by at most the `shift` hits right behind it.
        keyed = [(i - bonus(h) - (0.5 if bonus(h) else 0.0), i, h) for i, h in enumerate(group)]
        return [h for _, _, h in sorted(keyed, key=lambda k: (k[0], k[1]))]

    pinned = [h for h in hits if h.pinned_by]
    rest = [h for h in hits if not h.pinned_by]
    return rerank(pinned) + rerank(rest)


def presence_of(hits: list[SearchHit], *, config: EngineConfig) -> Presence:
    if not hits:
        return Presence.NONE
    best = max(h.coverage for h in hits[:3])
    # A pin is an exact symbol found - strong, unless the pinned memory shares little else
    # with the question (its 12 engineers, for "step 12 of the deploy")
    pinned = hits[0].pinned_by and hits[0].coverage >= config.weak_coverage
    if best >= config.strong_coverage or pinned:
        return Presence.STRONG
    if best >= config.weak_coverage:
        return Presence.WEAK
    return Presence.NONE


def coverage_of(q: Query, doc: DocTerms, stats: Stats, *, enrichment: bool = True) -> float:
    """Share of the query's weight (IDF) whose terms the memory holds, enrichment included
    unless `enrichment=False`."""
    groups, whole = weighted_groups(q, stats)
    if not whole:
        return 0.0
    held = doc.every if enrichment else doc.own
    covered = sum(weight for forms, weight in groups if not held.isdisjoint(forms))
    return covered / whole


def _coverage_by_terms(
    q: Query, terms: list[str], stats: Stats, held: list[int]
) -> dict[int, float]:
    """`coverage_of` for each set of `terms` (bit i: the memory holds `terms[i]`; `terms`
    hold every form of `q`'s groups) found in `held`."""
    groups, whole = weighted_groups(q, stats)
    bit = {term: 1 << i for i, term in enumerate(terms)}
    masks: list[tuple[int, float]] = []
    for forms, weight in groups:
        mask = 0
        for form in forms:
            mask |= bit[form]
        masks.append((mask, weight))
    out: dict[int, float] = {}
    for found in set(held):
        if not whole:
            out[found] = 0.0
            continue
        covered = sum(weight for mask, weight in masks if found & mask)
        out[found] = covered / whole
    return out


def weighted_groups(q: Query, stats: Stats) -> tuple[list[tuple[tuple[str, ...], float]], float]:
    """Each query term's forms with its weight - an unknown word weighs what its best
    alternative weighs (or the most, when it has none) - and the total, cached per search."""
    cached = stats.groups.get(id(q))
    if cached is None:
        groups = [(forms, min(stats.coverage_idf(f) for f in forms)) for forms in q.groups()]
        cached = stats.groups[id(q)] = (groups, sum(w for _, w in groups))
    return cached
