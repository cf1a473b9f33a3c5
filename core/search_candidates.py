"""Candidates of one search: the memories in the caller's horizon that an FTS5 OR over the
query's terms finds (the rarest first), and for Chinese, Japanese and Korean (and Thai, Lao,
Khmer and Myanmar) the memories that hold the query's single characters (clusters) when the
pairs leave the page short."""

from __future__ import annotations

from typing import Any

from core.ranking import DocTerms
from core.search_config import EngineConfig
from core.search_documents import Documents
from core.search_query import Query, Where, quote
from core.search_ranking import rank
from core.search_stats import Stats
from core.tokenizer import PAIR_KINDS, UNIT_KINDS


def choose_terms(
    q: Query, stats: Stats, *, config: EngineConfig, common: bool = False
) -> list[str]:
    """The query's indexed terms, rarest first, without the most common ones when rarer
    ones exist, at most `candidate_terms` of them (`common`: with them)."""
    df = stats.df
    terms = q.weights(1.0)
    if config.cjk_pairs_find and any(t.kind in PAIR_KINDS for t in q.terms):
        # Chinese, Japanese, Korean (and Thai, Lao, Khmer, Myanmar clusters): pairs find the
        # candidates; single characters (in a large share of any store) still count in the
        # ranking of what was found.
        single = {t.text for t in q.terms if t.kind in UNIT_KINDS}
        terms = {t: w for t, w in terms.items() if t not in single}
    present = sorted((t for t in terms if df.get(t, 0) > 0), key=lambda t: df[t])
    # Very common terms (in more than a few percent of a large store) make an OR query scan
    # huge posting lists for little ranking value; they are left out when rarer terms exist.
    cap = max(config.common_term_min_df, config.common_term_share * stats.total)
    chosen = present if common else [t for t in present if df[t] <= cap] or present[:1]
    return chosen[: config.candidate_terms]


def candidates(
    conn: Any,
    q: Query,
    stats: Stats,
    where: Where,
    revisions: dict[int, int],
    *,
    config: EngineConfig,
    chosen: list[str] | None = None,
    page: int = 0,
) -> list[int]:
    """Memories in the caller's horizon matching any chosen term of `q` (or of `chosen`),
    best first by FTS5's weighted BM25, at most `candidates` of them (their revisions go to
    `revisions`).

    The common terms left out are chosen on the whole store's counts - other workspaces'
    memories too - so when the chosen ones find fewer than `page` of the caller's memories,
    the common terms' matches follow theirs."""
    if chosen is None:
        chosen = choose_terms(q, stats, config=config)
        found = candidates(conn, q, stats, where, revisions, config=config, chosen=chosen)
        if len(found) >= page:
            return found
        cut = [t for t in choose_terms(q, stats, config=config, common=True) if t not in chosen]
        if not cut:
            return found
        more = candidates(conn, q, stats, where, revisions, config=config, chosen=cut)
        have = set(found)
        found += [s for s in more if s not in have]
        return found[: config.candidates]
    if not chosen:
        return []
    match = " OR ".join(quote(t) for t in chosen)
    c = config
    weights = [c.weight_content, c.weight_summary, c.weight_tags, c.weight_keywords]
    # First the best matches of the whole index, then the caller's filters on just those:
    # joining every match to the memory table costs more than ranking them. Only when too
    # few of them are the caller's does the filtered query run over every match.
    wide = c.candidates * 2
    # fetchall, not a loop over the cursor: a read cursor translates its errors
    # (`core/db_errors.py`), at a Python call for each row it steps through one by one.
    raw = [
        int(seq)
        for (seq,) in conn.execute(
            "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
            "ORDER BY bm25(memory_fts, ?, ?, ?, ?) LIMIT ?",
            [match, *weights, wide],
        ).fetchall()
    ]
    if raw:
        mine = _callers_matches(conn, raw, where, revisions, config=c)
        if len(mine) >= c.candidates or len(raw) < wide:
            return mine[: c.candidates]
    sql = (
        "SELECT memory_fts.rowid, m.revision FROM memory_fts "
        "JOIN memory m ON m.seq = memory_fts.rowid "
        f"WHERE memory_fts MATCH ? AND {where.sql} ORDER BY bm25(memory_fts, ?, ?, ?, ?) "
        "LIMIT ?"
    )
    rows = conn.execute(sql, [match, *where.params, *weights, c.candidates]).fetchall()
    revisions.update(rows)
    return [int(seq) for seq, _ in rows]


def _callers_matches(
    conn: Any, raw: list[int], where: Where, revisions: dict[int, int], *, config: EngineConfig
) -> list[int]:
    """The caller's memories among the index's best matches `raw`, in their order: at least
    the first `candidates` of them, or all there are (their revisions go to `revisions`).

    A page of `candidates` matches at a time, stopping once there are enough: most searches
    need the first page only, and each match looked up is a walk down two b-trees (`seq` is
    not the memory table's key)."""
    mine: list[int] = []
    step = max(1, config.candidates)
    for start in range(0, len(raw), step):
        chunk = raw[start : start + step]
        marks = ", ".join("?" for _ in chunk)
        keep = dict(
            conn.execute(
                f"SELECT m.seq, m.revision FROM memory m WHERE m.seq IN ({marks}) AND {where.sql}",
                [*chunk, *where.params],
            ).fetchall()
        )
        revisions.update(keep)
        mine += [s for s in chunk if s in keep]
        if len(mine) >= config.candidates:
            break
    return mine


def add_single_character_matches(
    conn: Any,
    documents: Documents,
    q: Query,
    stats: Stats,
    *,
    config: EngineConfig,
    where: Where,
    docs: dict[int, DocTerms],
    fused: dict[int, float],
) -> None:
    """Chinese, Japanese, Korean: character pairs find the candidates, but a one-character
    word (猫 in 我的猫) shares no pair with a memory that holds it (我家有一只猫). When the
    pairs leave the page short, memories holding the query's not-common single characters
    fill it - after every pair match, so they never push one down."""
    c = config
    if not c.cjk_pairs_find or not any(t.kind in PAIR_KINDS for t in q.terms):
        return
    cap = max(c.common_term_min_df, c.common_term_share * stats.total)
    singles = [
        t.text for t in q.terms if t.kind in UNIT_KINDS and 0 < stats.df.get(t.text, 0) <= cap
    ]
    revisions: dict[int, int] = {}
    more = [
        seq
        for seq in candidates(conn, q, stats, where, revisions, config=config, chosen=singles)
        if seq not in fused
    ]
    if not more:
        return
    docs.update(documents.terms(conn, more, revisions))
    floor = min(fused.values(), default=None)
    for seq, score in rank(conn, q, more, docs, stats, config=config):
        fused[seq] = score if floor is None else min(score, floor * 0.999)
