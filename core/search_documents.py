"""What a search reads of each memory: its index terms per field and what its own text names
whole, each cached by revision, and the memories themselves (hydration)."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from core.database import in_lists
from core.model import Memory
from core.ranking import DocTerms
from core.records import SELECT_MEMORY, memory_from_row
from core.tokenizer import named

_CACHE_DOCS = 20_000
K = TypeVar("K")
V = TypeVar("V")


class _Lru(Generic[K, V]):
    """A small thread-safe least-recently-used map."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            if len(self._items) > self._size:
                self._items.popitem(last=False)


class Documents:
    """The index terms and the names of memories, cached between searches."""

    def __init__(self) -> None:
        self._docs: _Lru[tuple[int, int | None], DocTerms] = _Lru(_CACHE_DOCS)
        # what each memory's own text names whole (`find_pins`), by (seq, revision): seqs are
        # never reused, and any change of the text is a new revision
        self._named: _Lru[tuple[int, int], frozenset[str]] = _Lru(_CACHE_DOCS)

    def terms(
        self, conn: Any, seqs: Sequence[int], revisions: dict[int, int]
    ) -> dict[int, DocTerms]:
        """The stored index terms of each memory, per field. Parsed terms are cached by
        (seq, revision): a memory's index row changes only with its revision."""
        out: dict[int, DocTerms] = {}
        for start in range(0, len(seqs), 400):
            chunk = list(seqs[start : start + 400])
            unknown = [s for s in chunk if s not in revisions]
            if unknown:
                marks = ", ".join("?" for _ in unknown)
                revisions.update(
                    conn.execute(
                        f"SELECT seq, revision FROM memory WHERE seq IN ({marks})", unknown
                    )
                )
            missing: list[int] = []
            for seq in chunk:
                cached = self._docs.get((seq, revisions.get(seq)))
                if cached is None:
                    missing.append(seq)
                else:
                    out[seq] = cached
            if not missing:
                continue
            marks = ", ".join("?" for _ in missing)
            sql = (
                "SELECT rowid, content, summary, tags, keywords FROM memory_fts "
                f"WHERE rowid IN ({marks})"
            )
            for seq, *texts in conn.execute(sql, missing):
                doc = out[int(seq)] = DocTerms.parse(texts)
                self._docs.put((int(seq), revisions.get(seq)), doc)
        return out

    def names(self, conn: Any, rows: Sequence[tuple[int, int]]) -> dict[int, frozenset[str]]:
        """What each memory's content, summary and tags name whole (`tokenizer.named`), from
        the cache or read and analysed once."""
        out: dict[int, frozenset[str]] = {}
        missing: dict[int, int] = {}
        for seq, revision in rows:
            known = self._named.get((seq, revision))
            if known is None:
                missing[seq] = revision
            else:
                out[seq] = known
        for chunk, marks in in_lists(list(missing)):
            for seq, revision, content, summary, tags in conn.execute(
                f"SELECT seq, revision, content, summary, tags FROM memory WHERE seq IN ({marks})",
                chunk,
            ):
                texts = (content, summary or "", " ".join(json.loads(tags or "[]")))
                names = frozenset().union(*(named(text) for text in texts))
                self._named.put((seq, revision), names)
                out[seq] = names
        return out


def hydrate(conn: Any, seqs: Sequence[int], now: int) -> dict[int, Memory]:
    if not seqs:
        return {}
    marks = ", ".join("?" for _ in seqs)
    rows = conn.execute(SELECT_MEMORY + f" WHERE m.seq IN ({marks})", list(seqs)).fetchall()
    return {int(r[1]): memory_from_row(r, now) for r in rows}
