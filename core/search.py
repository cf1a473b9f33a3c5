"""Searching memories: lexical retrieval over the FTS5 index with exact-symbol pins, fusion of
caller-supplied variants, a bounded rerank, and an honest presence signal.

The pipeline for one search:

1. Each query (the query, then every variant) is analysed by `core.tokenizer`; stopwords go.
2. Candidates: an FTS5 OR over the query's informative terms (the rarest first, the most common
   left out when rarer ones exist - and searched after all when those find too few), joined
   with the memory table so the horizon and the lifecycle filters apply inside the same
   statement; ranked by weighted BM25.
3. Several queries are fused with reciprocal rank fusion.
4. Exact symbols (numbers of two or more digits, IPs, ports, versions, paths, identifiers) found
   whole in a memory pin it above every unpinned result - a pin, not a weight.
5. A bounded rerank (importance, the human's pin, recency) may move an item at most two places
   and never changes which memories are in the top K.
6. Presence: how much of the query (weighted by rarity) the best result covers.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any, Generic, TypeVar

from core.clock import Clock
from core.database import in_lists
from core.errors import InvalidInput, NotReady, ScopeDenied
from core.horizon import horizon_sql
from core.memory_service import MemoryService
from core.model import Caller, Memory, Relation, Scope, Status, Surface, Tier
from core.ranking import (
    FIELDS,
    Bm25F,
    DocTerms,
    decode_averages,
    feedback_candidates,
    feedback_terms,
    idf,
)
from core.records import SELECT_MEMORY, memory_from_row
from core.relations import open_contradictions
from core.search_index import document_counts, index_fingerprint
from core.spelling import SPELLING_VERSION, alternatives
from core.store import Store
from core.tokenizer import TOKENIZER_VERSION, Term, TermKind, analyze, is_stop, named
from core.validation import utf8_size

MAX_SEARCH_LIMIT = 100
MAX_VARIANTS = 8
MAX_QUERY_CHARS = 4000
# Words the index has never seen that one search looks up alternatives for: in the query (and
# in each variant) and in all of them together. Each costs a walk over the indexed terms that
# share its first letters, and a long query of unknown words held the search worker for seconds.
SPELLING_WORDS_PER_QUERY = 8
SPELLING_WORDS_PER_SEARCH = 16


class Presence(StrEnum):
    STRONG = "strong"
    WEAK = "weak"
    NONE = "none"


class Horizon(StrEnum):
    """`default`: the caller's workspace, user and global memories, and its session.
    `all`: every workspace too (explicit broadening; people, or agents allowed to)."""

    DEFAULT = "default"
    ALL = "all"


@dataclass(frozen=True)
class EngineConfig:
    """Every knob that changes what a search returns. Its hash heads eval and bench output."""

    weight_content: float = 1.0
    weight_summary: float = 0.8
    weight_tags: float = 0.6
    weight_keywords: float = 0.5
    k1: float = 0.9
    b: float = 0.3
    candidate_terms: int = 16
    common_term_share: float = 0.05
    common_term_min_df: int = 1000
    cjk_pairs_find: int = 1
    candidates: int = 100
    feedback_docs: int = 10
    feedback_terms: int = 20
    feedback_pool: int = 4
    feedback_weight: float = 0.15
    coverage_boost: float = 0.5
    alternate_weight: float = 0.8
    rrf_k: float = 60.0
    variant_weight: float = 0.7
    strong_coverage: float = 0.8
    weak_coverage: float = 0.4
    variant_coverage: float = 0.75
    # Coverage weighs the query's words by rarity as if the store held at least this many
    # memories: in a store of a few, every stored word is "common" and a word the store never
    # saw outweighed all the words a memory shares with the question (presence `none` for
    # "which port does billing use in staging?" against the one memory that answers it).
    coverage_min_docs: int = 100
    pin_max_share: float = 0.05
    pin_min_df: int = 10
    rerank_max_shift: int = 2
    recent_days: float = 14.0

    def digest(self) -> str:
        return self._digest

    @functools.cached_property
    def _digest(self) -> str:
        blob = json.dumps(
            {
                "engine": asdict(self),
                "tokenizer": TOKENIZER_VERSION,
                "spelling": SPELLING_VERSION,
                "index": index_fingerprint(),
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class SearchRequest:
    query: str
    limit: int = 10
    variants: tuple[str, ...] = ()
    horizon: Horizon = Horizon.DEFAULT
    include_history: bool = False  # superseded memories too
    include_expired: bool = False
    kinds: frozenset[str] = frozenset()
    scopes: frozenset[Scope] = frozenset()
    tiers: frozenset[Tier] = frozenset()
    min_commit_seq: int | None = None
    # A person's narrowing in the Memories window (the protocol takes none of these): only
    # these statuses (of those searched), agents and workspaces - inside the search, so the
    # limit counts only memories that pass them.
    statuses: frozenset[Status] = frozenset()
    agents: frozenset[str] = frozenset()
    workspace_ids: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SearchHit:
    memory: Memory
    score: float
    pinned_by: tuple[str, ...] = ()  # exact symbols of the query found in this memory
    coverage: float = 0.0  # share of the query (weighted by rarity) this memory contains
    enrichment_only: bool = False  # matched only through the agent-supplied `keywords`
    disputed_with: tuple[str, ...] = ()  # ids of memories it has an open contradiction with

    @property
    def archived(self) -> bool:
        return self.memory.status is Status.ARCHIVED

    def to_dict(self) -> dict[str, Any]:
        m = self.memory
        out: dict[str, Any] = {
            "id": m.id,
            "revision": m.revision,
            "content": m.content,
            "summary": m.summary,
            "kind": m.kind,
            "scope": m.scope.value,
            "workspace_id": m.workspace_id,
            "tags": list(m.tags),
            "importance": m.importance,
            "pinned": m.pinned,
            "status": m.status.value,
            "author_tier": m.tier.value,
            "agent": m.agent,
            "created_at": m.created_at,
            "updated_at": m.updated_at,
            "score": round(self.score, 6),
            "coverage": round(self.coverage, 3),
        }
        if self.pinned_by:
            out["exact_match"] = list(self.pinned_by)
        if self.enrichment_only:
            out["matched_enrichment"] = True
        if self.disputed_with:
            out["disputed"] = True
            out["disputed_with"] = list(self.disputed_with)
        if self.archived:
            out["archived"] = True
        if m.expired:
            out["expired"] = True
        if m.superseded_by:
            out["superseded_by"] = m.superseded_by
        return out


@dataclass(frozen=True)
class SearchResult:
    presence: Presence
    hits: tuple[SearchHit, ...]
    # memories that matched, before the limit, and the other sides of disputes returned beside
    # them (which may take `hits` past the limit)
    matched: int
    broadened: bool = False
    config: str = ""
    relations: tuple[Relation, ...] = field(default=())
    partners: int = 0  # hits returned past the limit, as the other side of a dispute

    def to_dict(self) -> dict[str, Any]:
        return {
            "presence": self.presence.value,
            "results": [h.to_dict() for h in self.hits],
            "matched": self.matched,
            "broadened": self.broadened,
        }


@dataclass(frozen=True)
class _Query:
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


def _parse(text: str) -> _Query:
    seen: dict[str, Term] = {}
    for term in analyze(text):
        if not is_stop(term) and term.text not in seen:
            seen[term.text] = term
    # A query of stopwords alone has nothing to look for: they are never indexed, and the
    # spelling step would only turn them into other words ("what" -> "wheat").
    terms = tuple(seen.values())
    return _Query(terms, tuple(t.text for t in terms if t.is_symbol))


@dataclass(frozen=True)
class _Where:
    """The horizon and lifecycle filters of one search, as SQL on `memory m` and parameters."""

    sql: str
    params: list[Any]

    def and_(self, other: _Where) -> _Where:
        return _Where(f"{self.sql} AND {other.sql}", [*self.params, *other.params])


@dataclass
class _Stats:
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


_PINS = 50  # memories one exact symbol pins at most
_CACHE_TERMS = 200_000
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


@dataclass(frozen=True)
class _StatsCache:
    """Index statistics as of one committed sequence; `df` fills as terms are looked up."""

    seq: int
    total: int
    avg_lengths: tuple[float, float, float, float]
    df: dict[str, int]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class SearchService:
    """Lexical search and context bundles over the memories a caller may see."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        memories: MemoryService,
        *,
        config: EngineConfig | None = None,
        agents_may_broaden: bool = False,
    ) -> None:
        self._store = store
        self._clock = clock
        self._memories = memories
        self.config = config or EngineConfig()
        self._agents_may_broaden = agents_may_broaden
        self._cache = _StatsCache(-1, 0, (1.0, 1.0, 1.0, 1.0), {})
        self._docs: _Lru[tuple[int, int | None], DocTerms] = _Lru(_CACHE_DOCS)
        # what each memory's own text names whole (`_pinned`), by (seq, revision): seqs are
        # never reused, and any change of the text is a new revision
        self._named: _Lru[tuple[int, int], frozenset[str]] = _Lru(_CACHE_DOCS)

    def search(
        self, caller: Caller, req: SearchRequest, *, count_recall: bool = True
    ) -> SearchResult:
        """Search the caller's horizon. An agent's search counts as a recall of what it returns
        (`count_recall=False` when the caller counts what it actually uses, like context bundles).

        Raises:
            InvalidInput: empty or oversized query, bad limit, too many variants.
            ScopeDenied: an agent asked to broaden beyond its workspace without the right to.
            NotReady: `min_commit_seq` is newer than the last committed change.
        """
        self._check(caller, req)
        if (
            req.min_commit_seq is not None
            and req.min_commit_seq > self._store.committed_seq  # the counter first: no query
            and req.min_commit_seq > self._store.seen_seq()
        ):
            raise NotReady(
                f"change {req.min_commit_seq} is not committed yet (last is "
                f"{self._store.committed_seq}); retry shortly",
                data={"committed_seq": self._store.committed_seq},
            )
        now = self._clock.now_ms()
        queries = [_parse(req.query)] + [
            _parse(v) for v in dict.fromkeys(req.variants) if v.strip()
        ]
        visible = self._filters(caller, req, now)
        where = visible.and_(self._narrowing(req))
        conn = self._store.read_db.conn()
        with self._store.read_db.atomic():
            stats = self._stats(conn, [t.text for q in queries for t in q.terms])
            left = SPELLING_WORDS_PER_SEARCH
            for i, q in enumerate(queries):
                queries[i], used = self._correct(
                    conn, q, stats, where, words=min(left, SPELLING_WORDS_PER_QUERY)
                )
                left -= used
            revisions: dict[int, int] = {}
            pools = [
                self._candidates(conn, q, stats, where, revisions, page=req.limit) for q in queries
            ]
            found = list(dict.fromkeys(seq for p in pools for seq in p))
            docs = self._doc_terms(conn, found, revisions)
            rankings = [
                self._rank(conn, q, pool, docs, stats)
                for q, pool in zip(queries, pools, strict=True)
            ]
            fused = self._fuse(rankings, queries, docs, stats)
            if len(fused) < req.limit:
                self._add_single_character_matches(
                    conn, queries[0], stats, where=where, docs=docs, fused=fused
                )
            symbols = self._selective(queries, stats)
            pinned = self._pinned(conn, symbols, where) if symbols else {}
            order = [s for s in fused if s in pinned] + [s for s in pinned if s not in fused]
            order += [s for s in fused if s not in pinned]
            matched = len(order)
            top = order[: req.limit]
            memories = self._hydrate(conn, top, now)
            docs.update(self._doc_terms(conn, [s for s in top if s not in docs], revisions))
            contradictions = open_contradictions(
                conn, [memories[s].id for s in top if s in memories]
            )
            partners, nameable = self._partners(
                conn, contradictions, memories, visible=visible, where=where, now=now
            )
            # A side the caller may not see (another workspace's, forgotten) is never named; one
            # the request's kinds, scopes or tiers leave out is named, but not returned.
            seen = {m.id for m in memories.values()} | nameable
            contradictions = [r for r in contradictions if r.from_id in seen and r.to_id in seen]
        redact = self._memories.redactor.memory  # what a model may read of each result
        hits = [
            self._hit(
                redact(memories[s]),
                score=fused.get(s, 0.0),
                pinned_by=pinned.get(s, ()),
                doc=docs.get(s),
                queries=queries,
                stats=stats,
                variant_discount=self.config.variant_coverage,
            )
            for s in top
            if s in memories
        ]
        hits = self._bounded_rerank(hits, now)
        presence = self._presence(hits)
        # the other side of a dispute reaches a model like any result: redacted
        hits = self._mark_disputes(
            hits, {mid: redact(m) for mid, m in partners.items()}, contradictions
        )
        added = [h.memory.seq for h in hits if h.memory.id in partners]
        # a partner that matched nothing of the query counts too: `hits` never exceeds `matched`
        matched += len(set(added) - set(order))
        if count_recall and caller.surface is Surface.AGENT:
            self.record_recall([h.memory.id for h in hits])
        return SearchResult(
            presence=presence,
            hits=tuple(hits),
            matched=matched,
            broadened=req.horizon is Horizon.ALL,
            config=self.config.digest(),
            relations=tuple(contradictions),
            partners=len(added),
        )

    def plan(self, query: str) -> str | None:
        """The FTS5 MATCH expression the candidate step would run for `query` right now (for
        benchmarks that compare against raw SQLite); None when no term of it is indexed."""
        q = _parse(query)
        conn = self._store.read_db.conn()
        with self._store.read_db.atomic():
            stats = self._stats(conn, [t.text for t in q.terms])
        chosen = self._choose_terms(q, stats)
        return " OR ".join(_quote(t) for t in chosen) if chosen else None

    def record_recall(self, memory_ids: Sequence[str]) -> None:
        self._memories.record_recall(memory_ids)

    # -- steps -----------------------------------------------------------------------------

    def _check(self, caller: Caller, req: SearchRequest) -> None:
        utf8_size("query", req.query)
        for variant in req.variants:
            utf8_size("variants", variant)
        if not req.query.strip():
            raise InvalidInput("query is empty", data={"field": "query"})
        if len(req.query) > MAX_QUERY_CHARS or any(len(v) > MAX_QUERY_CHARS for v in req.variants):
            raise InvalidInput(
                f"query is longer than {MAX_QUERY_CHARS} characters", data={"field": "query"}
            )
        if not 1 <= req.limit <= MAX_SEARCH_LIMIT:
            raise InvalidInput(
                f"limit must be between 1 and {MAX_SEARCH_LIMIT}, got {req.limit}",
                data={"field": "limit"},
            )
        if len(req.variants) > MAX_VARIANTS:
            raise InvalidInput(
                f"at most {MAX_VARIANTS} variants, got {len(req.variants)}",
                data={"field": "variants"},
            )
        if req.horizon is Horizon.ALL and not caller.is_human and not self._agents_may_broaden:
            raise ScopeDenied(
                "broadening a search to every workspace is not allowed for agents "
                "(search.agents_may_broaden is off)",
                data={"field": "horizon"},
            )

    def _filters(self, caller: Caller, req: SearchRequest, now: int) -> _Where:
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
        return _Where(" AND ".join(clauses), params)

    @staticmethod
    def _narrowing(req: SearchRequest) -> _Where:
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
        return _Where(" AND ".join(clauses), params)

    def _stats(self, conn: Any, terms: Sequence[str]) -> _Stats:
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
            cache = self._cache = _StatsCache(seq, total, (avg[0], avg[1], avg[2], avg[3]), {})
        stats = _Stats(
            cache.df, cache.total, cache.avg_lengths, coverage_docs=self.config.coverage_min_docs
        )
        self._lookup_df(conn, stats, terms)
        return stats

    @staticmethod
    def _lookup_df(conn: Any, stats: _Stats, terms: Iterable[str]) -> None:
        missing = [t for t in dict.fromkeys(terms) if t not in stats.df]
        if missing:
            stats.df.update(document_counts(conn, missing))

    def _correct(
        self, conn: Any, q: _Query, stats: _Stats, where: _Where, *, words: int
    ) -> tuple[_Query, int]:
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
            if found and not self._findable(conn, found, where):
                found = tuple(
                    alternatives(conn, word, keep=lambda t: self._findable(conn, (t,), where))
                )
            if found:
                alternates[word] = found
        if not alternates:
            return q, len(unknown)
        self._lookup_df(conn, stats, [a for alts in alternates.values() for a in alts])
        return replace(q, alternates=alternates), len(unknown)

    @staticmethod
    def _findable(conn: Any, terms: Sequence[str], where: _Where) -> bool:
        """Whether a memory the search may return holds any of `terms`."""
        match = " OR ".join(_quote(t) for t in terms)
        row = conn.execute(
            "SELECT 1 FROM memory_fts JOIN memory m ON m.seq = memory_fts.rowid "
            f"WHERE memory_fts MATCH ? AND {where.sql} LIMIT 1",
            [match, *where.params],
        ).fetchone()
        return row is not None

    def _candidates(
        self,
        conn: Any,
        q: _Query,
        stats: _Stats,
        where: _Where,
        revisions: dict[int, int],
        *,
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
            chosen = self._choose_terms(q, stats)
            found = self._candidates(conn, q, stats, where, revisions, chosen=chosen)
            if len(found) >= page:
                return found
            cut = [t for t in self._choose_terms(q, stats, common=True) if t not in chosen]
            if not cut:
                return found
            more = self._candidates(conn, q, stats, where, revisions, chosen=cut)
            have = set(found)
            found += [s for s in more if s not in have]
            return found[: self.config.candidates]
        if not chosen:
            return []
        match = " OR ".join(_quote(t) for t in chosen)
        c = self.config
        weights = [c.weight_content, c.weight_summary, c.weight_tags, c.weight_keywords]
        # First the best matches of the whole index, then the caller's filters on just those:
        # joining every match to the memory table costs more than ranking them. Only when too
        # few of them are the caller's does the filtered query run over every match.
        wide = c.candidates * 2
        raw = [
            int(seq)
            for (seq,) in conn.execute(
                "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                "ORDER BY bm25(memory_fts, ?, ?, ?, ?) LIMIT ?",
                [match, *weights, wide],
            )
        ]
        if raw:
            marks = ", ".join("?" for _ in raw)
            keep = dict(
                conn.execute(
                    f"SELECT m.seq, m.revision FROM memory m WHERE m.seq IN ({marks}) "
                    f"AND {where.sql}",
                    [*raw, *where.params],
                )
            )
            revisions.update(keep)
            mine = [s for s in raw if s in keep]
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

    def _rank(
        self,
        conn: Any,
        q: _Query,
        pool: list[int],
        docs: dict[int, DocTerms],
        stats: _Stats,
    ) -> list[tuple[int, float]]:
        """Order a candidate pool by BM25F, then again with the query expanded by the words its
        best first-pass matches share (pseudo-relevance feedback)."""
        c = self.config
        scorer = Bm25F(
            c.k1,
            c.b,
            (c.weight_content, c.weight_summary, c.weight_tags, c.weight_keywords),
            stats.avg_lengths,
        )
        query = q.weights(c.alternate_weight)
        term_idf = {t: stats.idf(t) for t in query}
        norms = {seq: scorer.fields(docs[seq]) for seq in pool if seq in docs}
        first = sorted(
            ((seq, scorer.score(docs[seq], n, query, term_idf)) for seq, n in norms.items()),
            key=lambda x: -x[1],
        )
        if c.feedback_docs <= 0 or c.feedback_terms <= 0 or len(first) < 2:
            return first
        top = [(docs[seq], score) for seq, score in first[: c.feedback_docs]]
        words = feedback_candidates(
            top, query, depth=c.feedback_docs, count=c.feedback_terms * c.feedback_pool
        )
        self._lookup_df(conn, stats, words)
        words_idf = {t: stats.idf(t) for t in words if stats.df.get(t, 0) > 0}
        expansion = feedback_terms(words, words_idf, c.feedback_terms)
        if not expansion:
            return first
        # BM25F adds up over terms: the expanded score is the first score plus the expansion's.
        extra = {t: c.feedback_weight for t in expansion}
        term_idf.update({t: words_idf[t] for t in expansion})
        boost = c.coverage_boost
        return sorted(
            (
                (
                    seq,
                    (score + scorer.score(docs[seq], norms[seq], extra, term_idf))
                    * (1.0 + boost * _coverage(q, docs[seq], stats) if boost else 1.0),
                )
                for seq, score in first
            ),
            key=lambda x: -x[1],
        )

    def _add_single_character_matches(
        self,
        conn: Any,
        q: _Query,
        stats: _Stats,
        *,
        where: _Where,
        docs: dict[int, DocTerms],
        fused: dict[int, float],
    ) -> None:
        """Chinese, Japanese, Korean: character pairs find the candidates, but a one-character
        word (猫 in 我的猫) shares no pair with a memory that holds it (我家有一只猫). When the
        pairs leave the page short, memories holding the query's not-common single characters
        fill it - after every pair match, so they never push one down."""
        c = self.config
        if not c.cjk_pairs_find or not any(t.kind is TermKind.CJK_BIGRAM for t in q.terms):
            return
        cap = max(c.common_term_min_df, c.common_term_share * stats.total)
        singles = [
            t.text
            for t in q.terms
            if t.kind is TermKind.CJK_UNIGRAM and 0 < stats.df.get(t.text, 0) <= cap
        ]
        revisions: dict[int, int] = {}
        more = [
            seq
            for seq in self._candidates(conn, q, stats, where, revisions, chosen=singles)
            if seq not in fused
        ]
        if not more:
            return
        docs.update(self._doc_terms(conn, more, revisions))
        floor = min(fused.values(), default=None)
        for seq, score in self._rank(conn, q, more, docs, stats):
            fused[seq] = score if floor is None else min(score, floor * 0.999)

    def _selective(self, queries: list[_Query], stats: _Stats) -> tuple[str, ...]:
        """The queries' exact symbols that identify something: a "symbol" found in a large share
        of the store (a year in every dated note) pins nothing."""
        limit = max(self.config.pin_min_df, self.config.pin_max_share * stats.total)
        return tuple(
            dict.fromkeys(s for q in queries for s in q.symbols if 0 < stats.df.get(s, 0) <= limit)
        )

    def _choose_terms(self, q: _Query, stats: _Stats, *, common: bool = False) -> list[str]:
        """The query's indexed terms, rarest first, without the most common ones when rarer
        ones exist, at most `candidate_terms` of them (`common`: with them)."""
        df = stats.df
        terms = q.weights(1.0)
        if self.config.cjk_pairs_find and any(t.kind is TermKind.CJK_BIGRAM for t in q.terms):
            # Chinese, Japanese, Korean: character pairs find the candidates; single characters
            # (in a large share of any store) still count in the ranking of what was found.
            single = {t.text for t in q.terms if t.kind is TermKind.CJK_UNIGRAM}
            terms = {t: w for t, w in terms.items() if t not in single}
        present = sorted((t for t in terms if df.get(t, 0) > 0), key=lambda t: df[t])
        # Very common terms (in more than a few percent of a large store) make an OR query scan
        # huge posting lists for little ranking value; they are left out when rarer terms exist.
        cap = max(self.config.common_term_min_df, self.config.common_term_share * stats.total)
        chosen = present if common else [t for t in present if df[t] <= cap] or present[:1]
        return chosen[: self.config.candidate_terms]

    def _fuse(
        self,
        rankings: list[list[tuple[int, float]]],
        queries: list[_Query],
        docs: dict[int, DocTerms],
        stats: _Stats,
    ) -> dict[int, float]:
        """One ranking as it is. Several: reciprocal rank fusion where each list's vote is
        weighted by how much of that list's query the memory covers, so a variant's full match
        outweighs the original query's one-word match (variants weigh `variant_weight`)."""
        if len(rankings) == 1:
            return dict(rankings[0])
        fused: dict[int, float] = {}
        for i, (ranking, q) in enumerate(zip(rankings, queries, strict=True)):
            weight = 1.0 if i == 0 else self.config.variant_weight
            for rank, (seq, _) in enumerate(ranking):
                doc = docs.get(seq)
                coverage = _coverage(q, doc, stats) if doc else 0.0
                fused[seq] = fused.get(seq, 0.0) + weight * coverage / (
                    self.config.rrf_k + rank + 1
                )
        return dict(sorted(fused.items(), key=lambda kv: -kv[1]))

    def _pinned(
        self, conn: Any, symbols: tuple[str, ...], where: _Where
    ) -> dict[int, tuple[str, ...]]:
        """The memories (at most `_PINS` per symbol) whose own text names a query symbol whole.

        The index holds a symbol's pieces as terms too (`01` of SCOPED_ALPHA_01, `12` of
        10.0.0.12:5432), so a match there is only a candidate: the memory's text is analysed
        again (once per revision: `_names`), and a piece does not pin."""
        pins: dict[int, list[str]] = {}
        sql = (
            "SELECT memory_fts.rowid, m.revision FROM memory_fts "
            "JOIN memory m ON m.seq = memory_fts.rowid"
            f" WHERE memory_fts MATCH ? AND {where.sql} ORDER BY bm25(memory_fts) "
            "LIMIT ? OFFSET ?"
        )
        for symbol in symbols:
            # the memory's own text: an agent's keywords (enrichment) score, but never pin
            own = "{content summary tags} : " + _quote(symbol)
            found = 0
            # a page at a time: matches on a piece may crowd the first page (the whole symbol is
            # looked for on up to four), and most symbols fill no page at all
            for offset in range(0, 4 * _PINS, _PINS):
                rows = conn.execute(sql, [own, *where.params, _PINS, offset]).fetchall()
                names = self._names(conn, rows)
                for seq, _revision in rows:
                    if symbol in names[seq] and found < _PINS:
                        pins.setdefault(int(seq), []).append(symbol)
                        found += 1
                if found == _PINS or len(rows) < _PINS:
                    break
        return {seq: tuple(found) for seq, found in pins.items()}

    def _names(self, conn: Any, rows: Sequence[tuple[int, int]]) -> dict[int, frozenset[str]]:
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

    @staticmethod
    def _hydrate(conn: Any, seqs: Sequence[int], now: int) -> dict[int, Memory]:
        if not seqs:
            return {}
        marks = ", ".join("?" for _ in seqs)
        rows = conn.execute(SELECT_MEMORY + f" WHERE m.seq IN ({marks})", list(seqs)).fetchall()
        return {int(r[1]): memory_from_row(r, now) for r in rows}

    def _doc_terms(
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

    @staticmethod
    def _hit(
        memory: Memory,
        *,
        score: float,
        pinned_by: tuple[str, ...],
        doc: DocTerms | None,
        queries: list[_Query],
        stats: _Stats,
        variant_discount: float,
    ) -> SearchHit:
        if doc is None:
            return SearchHit(memory, score, pinned_by)
        # A variant is the agent's own rephrasing, not the question: its match counts for less.
        coverage = max(
            (
                _coverage(q, doc, stats) * (1.0 if i == 0 else variant_discount)
                for i, q in enumerate(queries)
            ),
            default=0.0,
        )
        enrichment_only = coverage > 0 and all(
            _coverage(q, doc, stats, enrichment=False) == 0 for q in queries
        )
        return SearchHit(memory, score, pinned_by, coverage, enrichment_only)

    def _bounded_rerank(self, hits: list[SearchHit], now: int) -> list[SearchHit]:
        """Let importance, the human's pin and recency move a hit up at most `rerank_max_shift`
        places, within the exact-pinned group and within the rest; membership never changes."""
        shift = self.config.rerank_max_shift
        recent = self.config.recent_days * 86_400_000

        def bonus(hit: SearchHit) -> int:
            m = hit.memory
            if m.status is not Status.ACTIVE or m.expired:
                return 0
            steps = (m.importance >= 4) + m.pinned + (now - m.updated_at <= recent)
            return min(shift, int(steps))

        def rerank(group: list[SearchHit]) -> list[SearchHit]:
            # A hit with bonus b sorts at (rank - b - 0.5): it passes at most b hits, and any hit
            # is passed by at most the `shift` hits right behind it.
            keyed = [(i - bonus(h) - (0.5 if bonus(h) else 0.0), i, h) for i, h in enumerate(group)]
            return [h for _, _, h in sorted(keyed, key=lambda k: (k[0], k[1]))]

        pinned = [h for h in hits if h.pinned_by]
        rest = [h for h in hits if not h.pinned_by]
        return rerank(pinned) + rerank(rest)

    @staticmethod
    def _partners(
        conn: Any,
        contradictions: list[Relation],
        found: dict[int, Memory],
        *,
        visible: _Where,
        where: _Where,
        now: int,
    ) -> tuple[dict[str, Memory], set[str]]:
        """The other side of each open contradiction that the results do not already hold:
        returned beside it when it passes the request's filters (`where`), and named (the
        second value) whenever the caller may see it (`visible`) - a kinds, scopes or tiers
        filter leaving it out does not make the dispute go away."""
        have = {m.id for m in found.values()}
        missing = sorted(
            {
                other
                for rel in contradictions
                for other in (rel.from_id, rel.to_id)
                if other not in have
            }
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

    @staticmethod
    def _mark_disputes(
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
                    out.append(
                        SearchHit(partner, 0.0, disputed_with=tuple(sorted(others[other_id])))
                    )
                    placed.add(other_id)
        return out

    def _presence(self, hits: list[SearchHit]) -> Presence:
        if not hits:
            return Presence.NONE
        best = max(h.coverage for h in hits[:3])
        # A pin is an exact symbol found - strong, unless the pinned memory shares little else
        # with the question (its 12 engineers, for "step 12 of the deploy")
        pinned = hits[0].pinned_by and hits[0].coverage >= self.config.weak_coverage
        if best >= self.config.strong_coverage or pinned:
            return Presence.STRONG
        if best >= self.config.weak_coverage:
            return Presence.WEAK
        return Presence.NONE


def _coverage(q: _Query, doc: DocTerms, stats: _Stats, *, enrichment: bool = True) -> float:
    """Share of the query's weight (IDF) whose terms the memory holds, enrichment included
    unless `enrichment=False`."""
    groups, whole = _weighted_groups(q, stats)
    if not whole:
        return 0.0
    held = doc.every if enrichment else doc.own
    covered = sum(weight for forms, weight in groups if not held.isdisjoint(forms))
    return covered / whole


def _weighted_groups(q: _Query, stats: _Stats) -> tuple[list[tuple[tuple[str, ...], float]], float]:
    """Each query term's forms with its weight - an unknown word weighs what its best
    alternative weighs (or the most, when it has none) - and the total, cached per search."""
    cached = stats.groups.get(id(q))
    if cached is None:
        groups = [(forms, min(stats.coverage_idf(f) for f in forms)) for forms in q.groups()]
        cached = stats.groups[id(q)] = (groups, sum(w for _, w in groups))
    return cached


__all__ = [
    "EngineConfig",
    "Horizon",
    "Presence",
    "SearchHit",
    "SearchRequest",
    "SearchResult",
    "SearchService",
    "TermKind",
]
