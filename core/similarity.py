"""Near-duplicates without a model: term overlap weighted by rarity.

Two texts are compared as sets of index terms (the search tokenizer's, stopwords out), each term
weighted by its IDF in the store: `sum(idf(shared)) / sum(idf(either))`. Common words weigh
almost nothing, so two phrasings of one fact that share its rare words score high. The threshold
(`SIMILAR_THRESHOLD`) was set on real text by `scripts/eval_similarity.py` (figures in
docs/governance.md).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from functools import lru_cache

from core.horizon import horizon_sql
from core.model import Caller, Memory
from core.ranking import FIELDS, decode_averages
from core.ranking import idf as rsj_idf
from core.search_index import document_counts
from core.store import Store
from core.tokenizer import analyze, is_stop

# Measured by scripts/eval_similarity.py: see docs/governance.md for the curve it was read from.
SIMILAR_THRESHOLD = 0.40
# Re-observing a queued proposal: the same fact proposed again, worded a little differently.
REOBSERVE_THRESHOLD = 0.40


def _terms(text: str) -> frozenset[str]:
    return frozenset(t.text for t in analyze(text) if not is_stop(t))


@lru_cache(maxsize=4096)
def terms_of(text: str) -> frozenset[str]:
    """The distinct index terms of `text` (stopwords left out)."""
    return _terms(text)


class TermSets:
    """The term sets of texts known by their content hash, kept across calls: a text compared
    on every write (a waiting proposal) is analysed once, not once per write. Content-addressed,
    so an entry is never stale; past `limit` entries all are dropped and analysed again when
    next asked for. Not thread-safe: one owner (the writer) uses it."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._sets: dict[str, frozenset[str]] = {}

    def missing(self, digests: Iterable[str]) -> list[str]:
        if len(self._sets) > self._limit:
            self._sets.clear()
        return [d for d in dict.fromkeys(digests) if d not in self._sets]

    def add(self, digest: str, text: str) -> None:
        self._sets[digest] = _terms(text)

    def __getitem__(self, digest: str) -> frozenset[str]:
        return self._sets[digest]


def weighted_overlap(a: frozenset[str], b: frozenset[str], idf: Callable[[str], float]) -> float:
    """IDF-weighted Jaccard of two term sets: 0 (nothing shared) to 1 (the same terms)."""
    union = a | b
    if not union:
        return 0.0
    whole = sum(idf(t) for t in union)
    if whole <= 0:
        return 0.0
    return sum(idf(t) for t in a & b) / whole


def is_superset(new: frozenset[str], old: frozenset[str]) -> bool:
    """`new` says everything `old` says and more: a strictly more complete proposal."""
    return old < new


def best_matches(
    text: str,
    others: Iterable[tuple[str, str]],
    idf: Callable[[str], float],
    *,
    threshold: float,
) -> list[tuple[str, float]]:
    """The (id, score) of each of `others` (id, text) at or above `threshold`, best first."""
    return best_term_matches(
        terms_of(text), ((oid, terms_of(other)) for oid, other in others), idf, threshold=threshold
    )


def best_term_matches(
    mine: frozenset[str],
    others: Iterable[tuple[str, frozenset[str]]],
    idf: Callable[[str], float],
    *,
    threshold: float,
) -> list[tuple[str, float]]:
    """best_matches on term sets: the (id, score) of each of `others` (id, its terms) at or
    above `threshold`, best first.

    A score is shared / (this text's weight + the weight of the other's remaining terms), so it
    is at most shared / this text's weight: an other below the threshold on that bound cannot
    reach it, and its remaining terms are never weighed (with a StoreIdf, the remaining terms
    of those that can are looked up in one batch)."""
    weight = {t: idf(t) for t in mine}  # each of this text's terms weighed once, not per pair
    mine_total = sum(weight.values())
    floor = threshold * mine_total * (1 - 1e-9)
    hopeful = []
    for oid, theirs in others:
        shared = sum(weight[t] for t in mine & theirs)
        if shared >= floor:
            hopeful.append((oid, theirs - mine, shared))
    if not hopeful:
        return []
    if isinstance(idf, StoreIdf):
        idf.lookup(frozenset().union(*(rest for _, rest, _ in hopeful)))
    scored = []
    for oid, rest, shared in hopeful:
        whole = mine_total + sum(idf(t) for t in rest)
        # the same value as weighted_overlap(mine, theirs, idf)
        scored.append((oid, shared / whole if whole > 0 else 0.0))
    return sorted(((oid, s) for oid, s in scored if s >= threshold), key=lambda x: (-x[1], x[0]))


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class StoreIdf:
    """IDF over the store's full-text index as of one committed sequence: document counts are
    looked up in batches and kept until the next committed write."""

    def __init__(self, conn: sqlite3.Connection, df: dict[str, int], total: int) -> None:
        self._conn = conn
        self._df = df
        self.total = total  # memories in the index
        self._idf: dict[str, float] = {}

    def lookup(self, terms: Iterable[str]) -> None:
        # A term counted 0 is asked again: it may be new since, and a new word is the rarest
        # (the most telling) word a text can share with the one just written.
        missing = [t for t in dict.fromkeys(terms) if not self._df.get(t)]
        if missing:
            self._df.update(document_counts(self._conn, missing))

    def df(self, term: str) -> int:
        if term not in self._df:
            self.lookup([term])
        return self._df.get(term, 0)

    def __call__(self, term: str) -> float:
        value = self._idf.get(term)
        if value is None:
            value = self._idf[term] = rsj_idf(self.df(term), self.total)
        return value


class NearDuplicates:
    """Finds the memories a new text closely resembles, among those a caller can see: FTS5
    picks candidates by the text's rarest terms, weighted overlap decides."""

    _PICK_TERMS = 5
    _CANDIDATES = 20
    # FTS5 ranks every memory holding any chosen term: the terms' document counts together are
    # kept under this many (or a tenth of the store, when larger) - see candidate_match.
    _POSTINGS = 2000

    # Document counts move by one per write; near-duplicate scores do not notice a few hundred
    # writes in a large store, so counts are kept that long (at most 5% of the store, or a
    # minute) instead of one commit.
    _STALE_WRITES = 500
    _STALE_SECONDS = 60.0

    def __init__(self, store: Store) -> None:
        self._store = store
        self._lock = threading.Lock()
        self._seq = -self._STALE_WRITES - 1
        self._at = 0.0
        self._total = 0
        self._df: dict[str, int] = {}

    def idf(self) -> StoreIdf:
        """IDF over the index (counts shared for a few hundred writes: see above)."""
        conn = self._store.read_db.conn()
        with self._lock:
            seq, now = self._store.committed_seq, time.monotonic()
            # At most 5% of the store written since the counts were taken (small stores: none).
            allowed = min(self._STALE_WRITES, self._total // 20)
            if (
                seq - self._seq > allowed
                or now - self._at > self._STALE_SECONDS
                or len(self._df) > 100_000
            ):
                self._seq, self._at = seq, now
                block = conn.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
                averages = decode_averages(block[0] if block else None, len(FIELDS))
                self._total = (
                    averages[0]
                    if averages is not None
                    else int(conn.execute("SELECT count(*) FROM memory_fts_docsize").fetchone()[0])
                )
                self._df = {}
            return StoreIdf(conn, self._df, self._total)

    def candidate_match(self, terms: Iterable[str], idf: StoreIdf) -> str | None:
        """The MATCH expression that finds candidates: any of the text's rarest terms, as many
        of the five rarest as hold at most `_POSTINGS` memories together (a tenth of a larger
        store); when even the rarest holds more, the memories holding all five. Ranking every
        memory that holds a common word made a write cost 30 ms in a 20,000-memory store of
        texts sharing one vocabulary; on LoCoMo turns, the bench's sentences and two such
        stores the best match stayed the same (docs/performance.md has the comparison)."""
        rarest = sorted((t for t in terms if idf.df(t) > 0), key=lambda t: (idf.df(t), t))
        rarest = rarest[: self._PICK_TERMS]
        if not rarest:
            return None
        budget = max(self._POSTINGS, idf.total // 10)
        chosen: list[str] = []
        postings = 0
        for term in rarest:
            if chosen and postings + idf.df(term) > budget:
                break
            chosen.append(term)
            postings += idf.df(term)
        if postings > budget:  # every term is common: only memories sharing all of them
            return " AND ".join(_quote(t) for t in rarest)
        return " OR ".join(_quote(t) for t in chosen)

    def find(self, caller: Caller, memory: Memory) -> tuple[str, ...]:
        """Ids of the active memories in `caller`'s horizon that `memory` closely resembles
        (exact copies left out: they are duplicates, not near ones), best first."""
        mine = terms_of(memory.content)
        if not mine:
            return ()
        idf = self.idf()
        idf.lookup(mine)
        match = self.candidate_match(mine, idf)
        if match is None:
            return ()
        conn = self._store.read_db.conn()
        # The best matches of the whole index first, then the caller's horizon on just those:
        # ranking every match joined to the memory table costs far more (as in search).
        # bm25() in ORDER BY, not FTS5's `rank` column: the same scores and order (ties by
        # rowid both ways), but `rank` makes FTS5 sort every match in a subquery before the
        # LIMIT applies, where this keeps the best few as it goes - a third less CPU for the
        # query (1.5 -> 1.1 ms at 10k memories), the write's largest single cost.
        seqs = [
            int(r[0])
            for r in conn.execute(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                "ORDER BY bm25(memory_fts) LIMIT ?",
                [match, self._CANDIDATES * 3],
            )
        ]
        if not seqs:
            return ()
        where, params = horizon_sql(caller)
        marks = ", ".join("?" for _ in seqs)
        found = {
            int(seq): (mid, text)
            for seq, mid, text in conn.execute(
                f"SELECT m.seq, m.id, m.content FROM memory m WHERE m.seq IN ({marks}) "
                f"AND {where} AND m.status = 'active'",
                [*seqs, *params],
            )
        }
        rows = [found[s] for s in seqs if s in found][: self._CANDIDATES]
        candidates = [(mid, text) for mid, text in rows if text != memory.content]
        matches = best_matches(memory.content, candidates, idf, threshold=SIMILAR_THRESHOLD)
        return tuple(mid for mid, _ in matches)
