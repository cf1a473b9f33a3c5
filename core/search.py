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

`SearchService` runs these steps in order; each lives in a module of its own: the configuration
(core/search_config.py), the request and the result (core/search_request.py,
core/search_result.py), the query, its spelling alternatives and the SQL filters
(core/search_query.py), index statistics (core/search_stats.py), what is read of each memory and
hydration (core/search_documents.py), candidates (core/search_candidates.py), ranking, fusion,
the bounded rerank and presence (core/search_ranking.py), exact-symbol pins
(core/search_pins.py) and disputes (core/search_disputes.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.clock import Clock
from core.errors import InvalidInput, NotReady, ScopeDenied
from core.memory_service import MemoryService
from core.model import Caller, Surface
from core.relations import open_contradictions
from core.search_candidates import add_single_character_matches, candidates, choose_terms
from core.search_config import EngineConfig
from core.search_disputes import find_partners, mark_disputes
from core.search_documents import Documents, hydrate
from core.search_pins import find_pins, selective
from core.search_query import correct, filters, narrowing, parse, quote
from core.search_ranking import bounded_rerank, fuse, make_hit, presence_of, rank
from core.search_request import Horizon, SearchRequest
from core.search_result import Presence, SearchHit, SearchResult
from core.search_stats import IndexStats
from core.store import Store
from core.tokenizer import TermKind
from core.validation import utf8_size

MAX_SEARCH_LIMIT = 100
MAX_VARIANTS = 8
MAX_QUERY_CHARS = 4000
# Words the index has never seen that one search looks up alternatives for: in the query (and
# in each variant) and in all of them together. Each costs a walk over the indexed terms that
# share its first letters, and a long query of unknown words held the search worker for seconds.
SPELLING_WORDS_PER_QUERY = 8
SPELLING_WORDS_PER_SEARCH = 16


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
        self._stats = IndexStats(store)
        self._documents = Documents()

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
        queries = [parse(req.query)] + [parse(v) for v in dict.fromkeys(req.variants) if v.strip()]
        visible = filters(caller, req, now)
        where = visible.and_(narrowing(req))
        conn = self._store.read_db.conn()
        with self._store.read_db.atomic():
            stats = self._stats.read(conn, self.config, [t.text for q in queries for t in q.terms])
            left = SPELLING_WORDS_PER_SEARCH
            for i, q in enumerate(queries):
                queries[i], used = correct(
                    conn, q, stats, where, words=min(left, SPELLING_WORDS_PER_QUERY)
                )
                left -= used
            revisions: dict[int, int] = {}
            pools = [
                candidates(conn, q, stats, where, revisions, config=self.config, page=req.limit)
                for q in queries
            ]
            found = list(dict.fromkeys(seq for p in pools for seq in p))
            docs = self._documents.terms(conn, found, revisions)
            rankings = [
                rank(conn, q, pool, docs, stats, config=self.config)
                for q, pool in zip(queries, pools, strict=True)
            ]
            fused = fuse(rankings, queries, docs, stats, config=self.config)
            if len(fused) < req.limit:
                add_single_character_matches(
                    conn,
                    self._documents,
                    queries[0],
                    stats,
                    config=self.config,
                    where=where,
                    docs=docs,
                    fused=fused,
                )
            symbols = selective(queries, stats, config=self.config)
            pinned = find_pins(conn, self._documents, symbols, where) if symbols else {}
            order = [s for s in fused if s in pinned] + [s for s in pinned if s not in fused]
            order += [s for s in fused if s not in pinned]
            matched = len(order)
            top = order[: req.limit]
            memories = hydrate(conn, top, now)
            docs.update(self._documents.terms(conn, [s for s in top if s not in docs], revisions))
            contradictions = open_contradictions(
                conn, [memories[s].id for s in top if s in memories]
            )
            partners, nameable = find_partners(
                conn, contradictions, memories, visible=visible, where=where, now=now
            )
            # A side the caller may not see (another workspace's, forgotten) is never named; one
            # the request's kinds, scopes or tiers leave out is named, but not returned.
            seen = {m.id for m in memories.values()} | nameable
            contradictions = [r for r in contradictions if r.from_id in seen and r.to_id in seen]
        redact = self._memories.redactor.memory  # what a model may read of each result
        hits = [
            make_hit(
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
        hits = bounded_rerank(hits, now, config=self.config)
        presence = presence_of(hits, config=self.config)
        # the other side of a dispute reaches a model like any result: redacted
        hits = mark_disputes(hits, {mid: redact(m) for mid, m in partners.items()}, contradictions)
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
        q = parse(query)
        conn = self._store.read_db.conn()
        with self._store.read_db.atomic():
            stats = self._stats.read(conn, self.config, [t.text for t in q.terms])
        chosen = choose_terms(q, stats, config=self.config)
        return " OR ".join(quote(t) for t in chosen) if chosen else None

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
