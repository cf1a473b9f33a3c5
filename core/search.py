"""Searching memories: lexical retrieval over the FTS5 index with exact-symbol pins, fusion of
caller-supplied variants, a bounded rerank, and an honest presence signal.

The pipeline for one search:

1. Each query (the query, then every variant) is analysed by `core.tokenizer`; stopwords go.
2. Candidates: an FTS5 OR over the query's informative terms (the rarest first, the most common
   left out when rarer ones exist), joined with the memory table so the horizon and the
   lifecycle filters apply inside the same statement; ranked by weighted BM25.
3. Several queries are fused with reciprocal rank fusion.
4. Exact symbols (numbers of two or more digits, IPs, ports, versions, paths, identifiers) found
   whole in a memory pin it above every unpinned result - a pin, not a weight.
5. A bounded rerank (importance, the human's pin, recency) may move an item at most two places
   and never changes which memories are in the top K.
6. Presence: how much of the query (weighted by rarity) the best result covers.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from typing import Any

from core.clock import Clock
from core.errors import InvalidInput, NotReady, ScopeDenied
from core.horizon import horizon_sql
from core.memory_service import MemoryService
from core.model import Caller, Memory, Relation, Scope, Status, Surface, Tier
from core.records import SELECT_MEMORY, memory_from_row
from core.relations import open_contradictions
from core.search_index import index_fingerprint
from core.store import Store
from core.tokenizer import TOKENIZER_VERSION, Term, TermKind, analyze, is_stop

MAX_SEARCH_LIMIT = 100
MAX_VARIANTS = 8
MAX_QUERY_CHARS = 4000


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
    candidate_terms: int = 16
    common_term_share: float = 0.25
    common_term_min_df: int = 1000
    candidates: int = 60
    rrf_k: float = 60.0
    variant_weight: float = 0.7
    strong_coverage: float = 0.6
    weak_coverage: float = 0.25
    rerank_max_shift: int = 2
    recent_days: float = 14.0

    def digest(self) -> str:
        blob = json.dumps(
            {"engine": asdict(self), "tokenizer": TOKENIZER_VERSION, "index": index_fingerprint()},
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
    matched: int  # candidates that matched before the limit
    broadened: bool = False
    config: str = ""
    relations: tuple[Relation, ...] = field(default=())

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


def _parse(text: str) -> _Query:
    seen: dict[str, Term] = {}
    for term in analyze(text):
        if not is_stop(term) and term.text not in seen:
            seen[term.text] = term
    if not seen:  # a query made only of stopwords still searches for them
        for term in analyze(text):
            seen.setdefault(term.text, term)
    terms = tuple(seen.values())
    return _Query(terms, tuple(t.text for t in terms if t.is_symbol))


@dataclass(frozen=True)
class _Where:
    """The horizon and lifecycle filters of one search, as SQL on `memory m` and parameters."""

    sql: str
    params: list[Any]


@dataclass(frozen=True)
class _Stats:
    df: dict[str, int]
    total: int

    def idf(self, term: str) -> float:
        return _idf(self.df.get(term, 0), self.total)


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
        if req.min_commit_seq is not None and req.min_commit_seq > self._store.committed_seq:
            raise NotReady(
                f"change {req.min_commit_seq} is not committed yet (last is "
                f"{self._store.committed_seq}); retry shortly",
                data={"committed_seq": self._store.committed_seq},
            )
        now = self._clock.now_ms()
        queries = [_parse(req.query)] + [
            _parse(v) for v in dict.fromkeys(req.variants) if v.strip()
        ]
        where = self._filters(caller, req, now)
        conn = self._store.read_db.conn()
        with self._store.read_db.atomic():
            df: dict[str, int] = {}
            for q in queries:
                df.update(self._doc_freqs(conn, [t.text for t in q.terms if t.text not in df]))
            stats = _Stats(df, self._doc_count(conn))
            rankings = [self._candidates(conn, q, stats, where) for q in queries]
            texts: dict[int, tuple[set[str], set[str]]] = {}
            if len(rankings) > 1:
                texts = self._indexed_terms(conn, list({s for r in rankings for s, _ in r}))
            fused = self._fuse(rankings, queries, texts, stats)
            symbols = tuple(dict.fromkeys(s for q in queries for s in q.symbols))
            pinned = self._pinned(conn, symbols, where) if symbols else {}
            order = [s for s in fused if s in pinned] + [s for s in pinned if s not in fused]
            order += [s for s in fused if s not in pinned]
            matched = len(order)
            top = order[: req.limit]
            memories = self._hydrate(conn, top, now)
            texts.update(self._indexed_terms(conn, [s for s in top if s not in texts]))
            contradictions = open_contradictions(
                conn, [memories[s].id for s in top if s in memories]
            )
            partners = self._partners(conn, contradictions, memories, where, now)
        score_of = dict(fused)
        hits = [
            self._hit(
                memories[s],
                score=score_of.get(s, 0.0),
                pinned_by=pinned.get(s, ()),
                terms=texts.get(s),
                queries=queries,
                stats=stats,
            )
            for s in top
            if s in memories
        ]
        hits = self._bounded_rerank(hits, now)
        presence = self._presence(hits)
        hits = self._mark_disputes(hits, partners, contradictions)
        if count_recall and caller.surface is Surface.AGENT:
            self.record_recall([h.memory.id for h in hits])
        return SearchResult(
            presence=presence,
            hits=tuple(hits),
            matched=matched,
            broadened=req.horizon is Horizon.ALL,
            config=self.config.digest(),
            relations=tuple(contradictions),
        )

    def plan(self, query: str) -> str | None:
        """The FTS5 MATCH expression the candidate step would run for `query` right now (for
        benchmarks that compare against raw SQLite); None when no term of it is indexed."""
        q = _parse(query)
        conn = self._store.read_db.conn()
        with self._store.read_db.atomic():
            stats = _Stats(self._doc_freqs(conn, [t.text for t in q.terms]), self._doc_count(conn))
        chosen = self._choose_terms(q, stats)
        return " OR ".join(_quote(t) for t in chosen) if chosen else None

    def record_recall(self, memory_ids: Sequence[str]) -> None:
        self._memories.record_recall(memory_ids)

    # -- steps -----------------------------------------------------------------------------

    def _check(self, caller: Caller, req: SearchRequest) -> None:
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
        for column, values in (
            ("m.kind", sorted(req.kinds)),
            ("m.scope", sorted(s.value for s in req.scopes)),
            ("m.tier", sorted(t.value for t in req.tiers)),
        ):
            if values:
                clauses.append(f"{column} IN ({', '.join('?' for _ in values)})")
                params.extend(values)
        return _Where(" AND ".join(clauses), params)

    @staticmethod
    def _doc_count(conn: Any) -> int:
        return int(conn.execute("SELECT count(*) FROM memory_fts_docsize").fetchone()[0])

    @staticmethod
    def _doc_freqs(conn: Any, terms: Sequence[str]) -> dict[str, int]:
        if not terms:
            return {}
        marks = ", ".join("?" for _ in terms)
        found = dict(
            conn.execute(f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({marks})", terms)
        )
        return {t: int(found.get(t, 0)) for t in terms}

    def _candidates(
        self, conn: Any, q: _Query, stats: _Stats, where: _Where
    ) -> list[tuple[int, float]]:
        chosen = self._choose_terms(q, stats)
        if not chosen:
            return []
        match = " OR ".join(_quote(t) for t in chosen)
        c = self.config
        sql = (
            "SELECT memory_fts.rowid, bm25(memory_fts, ?, ?, ?, ?) AS score FROM memory_fts "
            "JOIN memory m ON m.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND "
            f"{where.sql} ORDER BY score LIMIT ?"
        )
        weights = [c.weight_content, c.weight_summary, c.weight_tags, c.weight_keywords]
        args = [*weights, match, *where.params, c.candidates]
        return [(int(seq), -float(score)) for seq, score in conn.execute(sql, args)]

    def _choose_terms(self, q: _Query, stats: _Stats) -> list[str]:
        """The query's indexed terms, rarest first, without the most common ones when rarer
        ones exist, at most `candidate_terms` of them."""
        df = stats.df
        present = sorted((t.text for t in q.terms if df.get(t.text, 0) > 0), key=lambda t: df[t])
        # Very common terms (in more than a quarter of a large store) make an OR query scan huge
        # posting lists for little ranking value; they are left out when rarer terms exist.
        cap = max(self.config.common_term_min_df, self.config.common_term_share * stats.total)
        chosen = [t for t in present if df[t] <= cap] or present[:1]
        return chosen[: self.config.candidate_terms]

    def _fuse(
        self,
        rankings: list[list[tuple[int, float]]],
        queries: list[_Query],
        texts: dict[int, tuple[set[str], set[str]]],
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
                coverage = _coverage(q, texts.get(seq, (set(), set())), stats)
                fused[seq] = fused.get(seq, 0.0) + weight * coverage / (
                    self.config.rrf_k + rank + 1
                )
        return dict(sorted(fused.items(), key=lambda kv: -kv[1]))

    @staticmethod
    def _pinned(conn: Any, symbols: tuple[str, ...], where: _Where) -> dict[int, tuple[str, ...]]:
        pins: dict[int, list[str]] = {}
        for symbol in symbols:
            sql = (
                "SELECT memory_fts.rowid FROM memory_fts JOIN memory m ON m.seq = memory_fts.rowid"
                f" WHERE memory_fts MATCH ? AND {where.sql} ORDER BY bm25(memory_fts) LIMIT 50"
            )
            for (seq,) in conn.execute(sql, [_quote(symbol), *where.params]):
                pins.setdefault(int(seq), []).append(symbol)
        return {seq: tuple(found) for seq, found in pins.items()}

    @staticmethod
    def _hydrate(conn: Any, seqs: Sequence[int], now: int) -> dict[int, Memory]:
        if not seqs:
            return {}
        marks = ", ".join("?" for _ in seqs)
        rows = conn.execute(SELECT_MEMORY + f" WHERE m.seq IN ({marks})", list(seqs)).fetchall()
        return {int(r[1]): memory_from_row(r, now) for r in rows}

    @staticmethod
    def _indexed_terms(conn: Any, seqs: Sequence[int]) -> dict[int, tuple[set[str], set[str]]]:
        """For each memory, (terms of content+summary+tags, terms of keywords)."""
        if not seqs:
            return {}
        marks = ", ".join("?" for _ in seqs)
        out: dict[int, tuple[set[str], set[str]]] = {}
        sql = (
            "SELECT rowid, content, summary, tags, keywords FROM memory_fts "
            f"WHERE rowid IN ({marks})"
        )
        for seq, content, summary, tags, keywords in conn.execute(sql, list(seqs)):
            own = set(f"{content} {summary} {tags}".split())
            out[int(seq)] = (own, set((keywords or "").split()))
        return out

    @staticmethod
    def _hit(
        memory: Memory,
        *,
        score: float,
        pinned_by: tuple[str, ...],
        terms: tuple[set[str], set[str]] | None,
        queries: list[_Query],
        stats: _Stats,
    ) -> SearchHit:
        own, enrichment = terms or (set(), set())
        coverage = max((_coverage(q, (own, enrichment), stats) for q in queries), default=0.0)
        enrichment_only = coverage > 0 and all(
            _coverage(q, (own, set()), stats) == 0 for q in queries
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
        conn: Any, contradictions: list[Relation], found: dict[int, Memory], where: _Where, now: int
    ) -> dict[str, Memory]:
        """The other side of each open contradiction that the results do not already hold, when
        the caller may see it: both sides are always returned together."""
        have = {m.id for m in found.values()}
        missing = {
            other
            for rel in contradictions
            for other in (rel.from_id, rel.to_id)
            if other not in have
        }
        if not missing:
            return {}
        marks = ", ".join("?" for _ in missing)
        rows = conn.execute(
            SELECT_MEMORY + f" WHERE m.id IN ({marks}) AND {where.sql}", [*missing, *where.params]
        ).fetchall()
        return {r[0]: memory_from_row(r, now) for r in rows}

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
        if best >= self.config.strong_coverage or any(h.pinned_by for h in hits[:1]):
            return Presence.STRONG
        if best >= self.config.weak_coverage:
            return Presence.WEAK
        return Presence.NONE


def _coverage(q: _Query, terms: tuple[set[str], set[str]], stats: _Stats) -> float:
    """Share of the query's weight (IDF) whose terms the memory holds, enrichment included."""
    own, enrichment = terms
    weights = [(t.text, stats.idf(t.text)) for t in q.terms]
    whole = sum(w for _, w in weights)
    if not whole:
        return 0.0
    return sum(w for t, w in weights if t in own or t in enrichment) / whole


def _idf(df: int, total: int) -> float:
    """Robertson-Sparck Jones IDF, floored at a small positive weight for very common terms."""
    if total <= 0:
        return 1.0
    return max(0.05, math.log((total - df + 0.5) / (df + 0.5) + 1.0))


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
