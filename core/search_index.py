"""The full-text index: an FTS5 table of pre-tokenized text, kept in step with memories inside
the same write transaction, so a search never sees half a write.

The memory tables are the truth; this index is derived from them and `rebuild` recreates it
(`cairn reindex`). Rows are keyed by the memory's creation sequence (`memory.seq`). Every memory
that is not forgotten is indexed - history (superseded) and expired memories too, because asking
for them is a search option; filtering by state happens at query time.

`term_docs` counts, for every indexed term, the index rows that hold it - what FTS5's vocabulary
table answers too, but only by walking the term's whole posting list (milliseconds for a common
term in a large store, on every search after a write). It changes in the same transaction as
the rows it counts, and `recount` rebuilds it from the index.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence

from core.database import in_lists
from core.model import Memory, Status
from core.tokenizer import TERM_CHARS, TOKENIZER_VERSION, index_text
from core.writer import WriteTx

FTS_COLUMNS = ("content", "summary", "tags", "keywords")
# Combining marks (`M*`) are token characters: by default unicode61 splits at them, and an Indic
# word (`पायथन`: `प` `यथन`) or a Thai cluster pair matched any other with the same letters.
CREATE_FTS = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5(content, summary, tags, keywords, "
    "tokenize = \"unicode61 remove_diacritics 0 categories 'L* N* Co M*' "
    f"tokenchars '{TERM_CHARS}'\")"
)
CREATE_VOCAB = "CREATE VIRTUAL TABLE memory_fts_vocab USING fts5vocab('memory_fts', 'row')"
CREATE_TERM_DOCS = (
    "CREATE TABLE term_docs (term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID"
)


def index_fingerprint() -> str:
    """Changes whenever the indexed text for the same memory would change."""
    return hashlib.sha256((TOKENIZER_VERSION + CREATE_FTS).encode()).hexdigest()[:16]


def index_row(memory: Memory) -> tuple[str, str, str, str]:
    return (
        index_text(memory.content),
        index_text(memory.summary),
        index_text(" ".join(memory.tags)),
        index_text(memory.keywords),
    )


def _seqs(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for chunk, marks in in_lists(ids):
        out.update(conn.execute(f"SELECT id, seq FROM memory WHERE id IN ({marks})", chunk))
    return out


def document_counts(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[str, int]:
    """How many index rows hold each of `terms` (0 for a term no row holds)."""
    out = dict.fromkeys(terms, 0)
    for chunk, marks in in_lists(terms):
        out.update(conn.execute(f"SELECT term, docs FROM term_docs WHERE term IN ({marks})", chunk))
    return out


def _row_terms(texts: Iterable[str | None]) -> set[str]:
    """The distinct terms of one index row (its texts are space-separated terms)."""
    return {term for text in texts if text for term in text.split()}


def _indexed(conn: sqlite3.Connection, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The index rows of these memories (by seq) as they stand."""
    out: dict[int, tuple[str, ...]] = {}
    for chunk, marks in in_lists(seqs):
        for seq, *texts in conn.execute(
            "SELECT rowid, content, summary, tags, keywords FROM memory_fts "
            f"WHERE rowid IN ({marks})",
            chunk,
        ):
            out[int(seq)] = tuple(texts)
    return out


def _drop_rows(
    conn: sqlite3.Connection, rows: dict[int, tuple[str, ...]], counts: Counter[str]
) -> None:
    """Delete these index rows (from `_indexed`), taking their terms off `counts`."""
    for texts in rows.values():
        counts.subtract(_row_terms(texts))
    conn.executemany("DELETE FROM memory_fts WHERE rowid = ?", [(s,) for s in rows])


def _count(conn: sqlite3.Connection, counts: Counter[str]) -> None:
    """Apply the change in each term's row count to `term_docs` (a term no row holds leaves)."""
    moved = [(term, n) for term, n in counts.items() if n]
    conn.executemany(
        "INSERT INTO term_docs (term, docs) VALUES (?, ?) "
        "ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
        moved,
    )
    fewer = [term for term, n in moved if n < 0]
    for chunk, marks in in_lists(fewer):
        conn.execute(f"DELETE FROM term_docs WHERE docs <= 0 AND term IN ({marks})", chunk)


class SearchIndex:
    """Keeps `memory_fts` (and `term_docs`) equal to the memories it indexes; plugged in as a
    MemoryObserver."""

    def memories_written(
        self, tx: WriteTx, memories: Sequence[Memory], *, fresh: bool = False
    ) -> None:
        conn = tx.conn
        unknown = [m.id for m in memories if not m.seq]
        seqs = _seqs(conn, unknown) if unknown else {}
        wanted = {
            m.seq or seqs[m.id]: index_row(m) for m in memories if m.status is not Status.FORGOTTEN
        }
        counts: Counter[str] = Counter()
        if not fresh:
            current = _indexed(conn, [m.seq or seqs[m.id] for m in memories])
            # A pin, an archive, a supersede leave the text as it was: its row stays.
            same = {s for s, texts in current.items() if wanted.get(s) == texts}
            _drop_rows(conn, {s: t for s, t in current.items() if s not in same}, counts)
            wanted = {s: texts for s, texts in wanted.items() if s not in same}
        indexed = [(s, *texts) for s, texts in wanted.items()]
        conn.executemany(
            "INSERT INTO memory_fts (rowid, content, summary, tags, keywords) "
            "VALUES (?, ?, ?, ?, ?)",
            indexed,
        )
        for row in indexed:
            counts.update(_row_terms(row[1:]))
        _count(conn, counts)

    def memories_removed(self, tx: WriteTx, memory_ids: Sequence[str], *, forgotten: bool) -> None:
        conn = tx.conn
        counts: Counter[str] = Counter()
        _drop_rows(conn, _indexed(conn, list(_seqs(conn, memory_ids).values())), counts)
        _count(conn, counts)
        if forgotten:
            # FTS5 (before SQLite 3.42's secure-delete) leaves a deleted row's terms in older
            # index segments until they merge; merging everything right after the commit removes
            # the forgotten words from the file.
            tx.after_commit.append(lambda: tx.request(optimize, "index"))


def optimize(tx: WriteTx) -> None:
    tx.conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')")


def rebuild(conn: sqlite3.Connection) -> int:
    """Recreate the index from the memory table (inside the caller's transaction)."""
    conn.execute("DROP TABLE IF EXISTS memory_fts_vocab")
    conn.execute("DROP TABLE IF EXISTS memory_fts")
    conn.execute(CREATE_FTS)
    conn.execute(CREATE_VOCAB)
    total = 0
    cursor = conn.execute(
        "SELECT seq, content, summary, tags, keywords FROM memory WHERE status != 'forgotten' "
        "ORDER BY seq"
    )
    while True:
        rows = cursor.fetchmany(2000)
        if not rows:
            break
        conn.executemany(
            "INSERT INTO memory_fts (rowid, content, summary, tags, keywords) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (
                    seq,
                    index_text(content),
                    index_text(summary),
                    index_text(" ".join(_tags(tags))),
                    index_text(keywords),
                )
                for seq, content, summary, tags, keywords in rows
            ],
        )
        total += len(rows)
    conn.execute("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')")
    # Schema 1.1 built the index before term_docs existed (2.0 adds it, then recounts).
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'term_docs'").fetchone():
        recount(conn)
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('index_fingerprint', ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (index_fingerprint(),),
    )
    return total


def recount(conn: sqlite3.Connection) -> None:
    """`term_docs` from the index rows, split as every write splits them (`_row_terms`) -
    FTS5's vocabulary splits a few characters (`‿`, `·`) differently, and
    counts taken one way then changed the other would drift."""
    counts: Counter[str] = Counter()
    cursor = conn.execute("SELECT content, summary, tags, keywords FROM memory_fts")
    while rows := cursor.fetchmany(2000):
        for row in rows:
            counts.update(_row_terms(row))
    conn.execute("DELETE FROM term_docs")
    conn.executemany("INSERT INTO term_docs (term, docs) VALUES (?, ?)", counts.items())


def _tags(raw: str) -> list[str]:
    value = json.loads(raw or "[]")
    return [str(t) for t in value] if isinstance(value, list) else []


def stale(conn: sqlite3.Connection) -> bool:
    """True when the index was built by a different tokenizer or table definition."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'index_fingerprint'").fetchone()
    return row is None or row[0] != index_fingerprint()
