"""Exact-symbol pins: a query symbol found whole in a memory's own text pins it above every
unpinned result - a pin, not a weight."""

from __future__ import annotations

from typing import Any

from core.search_config import EngineConfig
from core.search_documents import Documents
from core.search_query import Query, Where, quote
from core.search_stats import Stats

_PINS = 50  # memories one exact symbol pins at most


def selective(queries: list[Query], stats: Stats, *, config: EngineConfig) -> tuple[str, ...]:
    """The queries' exact symbols that identify something: a "symbol" found in a large share
    of the store (a year in every dated note) pins nothing."""
    limit = max(config.pin_min_df, config.pin_max_share * stats.total)
    return tuple(
        dict.fromkeys(s for q in queries for s in q.symbols if 0 < stats.df.get(s, 0) <= limit)
    )


def find_pins(
    conn: Any, documents: Documents, symbols: tuple[str, ...], where: Where
) -> dict[int, tuple[str, ...]]:
    """The memories (at most `_PINS` per symbol) whose own text names a query symbol whole.

    The index holds a symbol's pieces as terms too (`01` of SCOPED_ALPHA_01, `12` of
    10.0.0.12:5432), so a match there is only a candidate: the memory's text is analysed
    again (once per revision: `Documents.names`), and a piece does not pin."""
    pins: dict[int, list[str]] = {}
    sql = (
        "SELECT memory_fts.rowid, m.revision FROM memory_fts "
        "JOIN memory m ON m.seq = memory_fts.rowid"
        f" WHERE memory_fts MATCH ? AND {where.sql} ORDER BY bm25(memory_fts) "
        "LIMIT ? OFFSET ?"
    )
    for symbol in symbols:
        # the memory's own text: an agent's keywords (enrichment) score, but never pin
        own = "{content summary tags} : " + quote(symbol)
        found = 0
        # a page at a time: matches on a piece may crowd the first page (the whole symbol is
        # looked for on up to four), and most symbols fill no page at all
        for offset in range(0, 4 * _PINS, _PINS):
            rows = conn.execute(sql, [own, *where.params, _PINS, offset]).fetchall()
            names = documents.names(conn, rows)
            for seq, _revision in rows:
                if symbol in names[seq] and found < _PINS:
                    pins.setdefault(int(seq), []).append(symbol)
                    found += 1
            if found == _PINS or len(rows) < _PINS:
                break
    return {seq: tuple(found) for seq, found in pins.items()}
