"""Index statistics for one search: document frequencies, the document count and the mean field
lengths, read from the index as a read transaction sees it and kept until the next commit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.ranking import FIELDS, decode_averages, idf
from core.search_config import EngineConfig
from core.search_index import document_counts
from core.store import Store

_CACHE_TERMS = 200_000


@dataclass
class Stats:
    """Document frequencies (filled as terms are looked up), the document count, and the mean
    length of each indexed field - all from the index as this read transaction sees it."""

    df: dict[str, int]
    total: int
    avg_lengths: tuple[float, float, float, float]
    _idf: dict[str, float] = field(default_factory=dict)
    groups: dict[int, tuple[list[tuple[tuple[str, ...], float]], float]] = field(
        default_factory=dict
    )

    coverage_docs: int = 0  # the document count coverage weighs rarity against (see EngineConfig)
    _coverage_idf: dict[str, float] = field(default_factory=dict)

    def idf(self, term: str) -> float:
        value = self._idf.get(term)
        if value is None:
            value = self._idf[term] = idf(self.df.get(term, 0), self.total)
        return value

    def coverage_idf(self, term: str) -> float:
        value = self._coverage_idf.get(term)
        if value is None:
            total = max(self.total, self.coverage_docs)
            value = self._coverage_idf[term] = idf(self.df.get(term, 0), total)
        return value


@dataclass(frozen=True)
class StatsCache:
    """Index statistics as of one committed sequence; `df` fills as terms are looked up."""

    seq: int
    total: int
    avg_lengths: tuple[float, float, float, float]
    df: dict[str, int]


class IndexStats:
    """The statistics cache of one search service, refreshed after each commit."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._cache = StatsCache(-1, 0, (1.0, 1.0, 1.0, 1.0), {})

    def read(self, conn: Any, config: EngineConfig, terms: Sequence[str]) -> Stats:
        """Index statistics for this search: the per-field averages (read from FTS5's own
        record) and each term's document count (`term_docs`), cached until the next commit."""
        seq = self._store.committed_seq
        cache = self._cache
        if cache.seq != seq or len(cache.df) > _CACHE_TERMS:
            block = conn.execute("SELECT block FROM memory_fts_data WHERE id = 1").fetchone()
            averages = decode_averages(block[0] if block else None, len(FIELDS))
            if averages is None:
                total = int(conn.execute("SELECT count(*) FROM memory_fts_docsize").fetchone()[0])
                avg: tuple[float, ...] = (1.0,) * len(FIELDS)
            else:
                total, avg = averages
            cache = self._cache = StatsCache(seq, total, (avg[0], avg[1], avg[2], avg[3]), {})
        stats = Stats(
            cache.df, cache.total, cache.avg_lengths, coverage_docs=config.coverage_min_docs
        )
        lookup_df(conn, stats, terms)
        return stats


def lookup_df(conn: Any, stats: Stats, terms: Iterable[str]) -> None:
    missing = [t for t in dict.fromkeys(terms) if t not in stats.df]
    if missing:
        stats.df.update(document_counts(conn, missing))
