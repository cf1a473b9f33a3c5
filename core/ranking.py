"""Scoring candidates in Python: BM25F over the indexed fields, and pseudo-relevance feedback.

FTS5 finds the candidates (a few hundred at most); this module ranks them with parameters FTS5
does not expose - k1, b and per-field weights - and expands the query with the words that the
best first-pass matches share (RM3-style pseudo-relevance feedback). Expansion only reorders the
candidates; it never brings in a memory that matched none of the query's own terms.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import contains

FIELDS = ("content", "summary", "tags", "keywords")


class DocTerms:
    """The indexed terms of one memory, per field, as stored in the index; `own` holds the
    memory's own words (content, summary, tags), `enrichment` the agent-supplied keywords."""

    __slots__ = ("_own_counts", "enrichment", "every", "fields", "lengths", "own")

    def __init__(self, fields: tuple[Counter[str], ...]) -> None:
        self.fields = fields
        self.lengths = tuple(sum(c.values()) for c in fields)
        self.own = frozenset(fields[0]).union(fields[1], fields[2])
        self.enrichment = frozenset(fields[3]) if fields[3] else _NONE
        # the same set when there is no enrichment (most memories): one set less to keep
        self.every = self.own | self.enrichment if self.enrichment else self.own
        self._own_counts: Counter[str] | None = None

    @property
    def own_counts(self) -> Counter[str]:
        """Counts of the memory's own words over content, summary and tags (built once)."""
        if self._own_counts is None:
            self._own_counts = self.fields[0] + self.fields[1] + self.fields[2]
        return self._own_counts

    @staticmethod
    def parse(texts: Sequence[str | None]) -> DocTerms:
        # Each word once in memory, however many cached documents hold it (interned): a
        # document's own copies of its words were about a third of the cache.
        return DocTerms(tuple(Counter(map(sys.intern, t.split())) if t else _EMPTY for t in texts))


_EMPTY: Counter[str] = Counter()
_NONE: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Bm25F:
    k1: float
    b: float
    weights: tuple[float, float, float, float]
    avg_lengths: tuple[float, float, float, float]
    # field lengths -> each non-empty field's place and its weight over its length
    # normalisation: the documents of one search share a few dozen shapes
    _shapes: dict[tuple[int, ...], tuple[tuple[int, float], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    def shape(self, lengths: tuple[int, ...]) -> tuple[tuple[int, float], ...]:
        """Each non-empty field of a document with these field lengths: its place and its
        weight over its length normalisation (documents share a few dozen shapes)."""
        shape = self._shapes.get(lengths)
        if shape is None:
            shape = self._shapes[lengths] = tuple(
                (i, weight / (1.0 - self.b + self.b * (length / avg if avg > 0 else 1.0)))
                for i, (length, avg, weight) in enumerate(
                    zip(lengths, self.avg_lengths, self.weights, strict=True)
                )
                if length
            )
        return shape

    def scores(
        self,
        docs: Sequence[DocTerms],
        shapes: Sequence[tuple[tuple[int, float], ...]],
        query: Mapping[str, float],
        idf: Mapping[str, float],
    ) -> tuple[list[float], list[int]]:
        """BM25F of each document (`shapes`: each one's `Bm25F.shape`): per query term, the
        fields' counts length-normalised and weighted, then saturated once with k1. Also which
        of the query's terms each document holds: bit i for the i-th term of `query`.

        One term at a time over the whole pool (a search scores about a hundred documents),
        finding the documents that hold it in one C-level pass; each document's sum still
        runs in the query's own order, never a set's: a set's order - and so the last bits of
        the sum - changes with each process's string hashing, and two memories that tie
        swapped places from one start of Cairn to the next (until 2026-11-30)."""
        k1 = self.k1
        saturated = k1 + 1.0
        totals = [0.0] * len(docs)
        held = [0] * len(docs)
        every = [doc.every for doc in docs]
        places = range(len(docs))
        bit = 1
        for term, weight in query.items():
            term_idf = idf.get(term, 0.0)
            for i in compress(places, map(contains, every, repeat(term))):
                counters = docs[i].fields
                f = 0.0
                for j, norm in shapes[i]:
                    count = counters[j].get(term)
                    if count:
                        f += count * norm
                totals[i] += weight * term_idf * f * saturated / (f + k1)
                held[i] |= bit
            bit <<= 1
        return totals, held


def idf(df: int, total: int) -> float:
    """Robertson-Sparck Jones IDF (never negative), floored so no term weighs nothing."""
    if total <= 0:
        return 1.0
    return max(0.05, math.log((total - df + 0.5) / (df + 0.5) + 1.0))


def feedback_candidates(
    ranked: Sequence[tuple[DocTerms, float]], query: Iterable[str], *, depth: int, count: int
) -> dict[str, float]:
    """Words of the top `depth` first-pass results (not already in the query), each weighted by
    its share of each document's own words times the document's score relative to the best;
    the `count` heaviest. Their rarity is applied by `feedback_terms`."""
    top = list(ranked[:depth])
    if not top or top[0][1] <= 0:
        return {}
    best = top[0][1]
    excluded = set(query)
    weights: dict[str, float] = {}
    for doc, score in top:
        own = doc.own_counts
        length = doc.lengths[0] + doc.lengths[1] + doc.lengths[2]
        if not length:
            continue
        for term, tf in own.items():
            if term not in excluded:
                weights[term] = weights.get(term, 0.0) + (tf / length) * (score / best)
    chosen = sorted(weights, key=lambda t: (-weights[t], t))[:count]
    return {t: weights[t] for t in chosen}


def feedback_terms(
    candidates: Mapping[str, float], term_idf: Mapping[str, float], count: int
) -> list[str]:
    """The `count` expansion terms with the highest weight times IDF (RM3-style feedback);
    terms the index does not know (`term_idf` lacks them) are skipped."""
    scored = {t: w * term_idf[t] for t, w in candidates.items() if t in term_idf}
    return sorted(scored, key=lambda t: (-scored[t], t))[:count]


def decode_averages(block: bytes | None, columns: int) -> tuple[int, tuple[float, ...]] | None:
    """Read FTS5's averages record (its `_data` row 1: SQLite varints - the row count, then the
    token total of each column). None when the record is absent or not in that shape."""
    if not block:
        return None
    values: list[int] = []
    i = 0
    while i < len(block) and len(values) < columns + 1:
        value = 0
        for j in range(9):
            if i >= len(block):
                return None
            byte = block[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    if len(values) != columns + 1 or values[0] <= 0:
        return None
    rows = values[0]
    return rows, tuple(v / rows for v in values[1:])
