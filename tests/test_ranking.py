"""BM25F over a pool of documents (core/ranking.py) and the rank built on it: the same scores,
to the last bit, as scoring each document on its own."""

from __future__ import annotations

import math
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from core.ranking import Bm25F, DocTerms, feedback_candidates, feedback_terms
from core.search_config import EngineConfig
from core.search_query import parse
from core.search_ranking import best_first, coverage_of, rank
from core.search_stats import Stats

# each its own index term (`parse` keeps it as it is)
WORDS = ["alpha", "beta", "gamma", "delta", "port", "deploy", "stage", "token", "9090", "q"]
field_text = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
doc_texts = st.tuples(field_text, field_text, field_text, field_text)


def one_by_one(
    scorer: Bm25F, doc: DocTerms, query: dict[str, float], idf: dict[str, float]
) -> float:
    """BM25F of one document as Cairn computed it until 2026-12-02: every field's count times
    its weight over its length normalisation, summed in the fields' order, saturated once per
    term, the terms summed in the query's order."""
    fields = [
        (counter, weight / (1.0 - scorer.b + scorer.b * (length / avg if avg > 0 else 1.0)))
        for counter, length, avg, weight in zip(
            doc.fields, doc.lengths, scorer.avg_lengths, scorer.weights, strict=True
        )
        if length
    ]
    total = 0.0
    for term, weight in query.items():
        if term not in doc.every:
            continue
        f = 0.0
        for counter, norm in fields:
            count = counter.get(term)
            if count:
                f += count * norm
        total += weight * idf.get(term, 0.0) * f * (scorer.k1 + 1.0) / (f + scorer.k1)
    return total


def stats_for(docs: list[DocTerms]) -> Stats:
    df = Counter(term for doc in docs for term in doc.every)
    lengths = [sum(doc.lengths[i] for doc in docs) / max(1, len(docs)) for i in range(4)]
    return Stats(
        {w: df.get(w, 0) for w in WORDS},
        len(docs),
        (lengths[0], lengths[1], lengths[2], lengths[3]),
    )


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(doc_texts, min_size=1, max_size=12),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6, unique=True),
)
def test_a_pool_scores_as_each_document_alone(
    texts: list[tuple[str, str, str, str]], query: list[str]
) -> None:
    docs = [DocTerms.parse(t) for t in texts]
    stats = stats_for(docs)
    scorer = Bm25F(0.9, 0.3, (1.0, 0.8, 0.6, 0.5), stats.avg_lengths)
    weights = {t: 1.0 if i % 2 else 0.8 for i, t in enumerate(query)}
    idf = {t: stats.idf(t) for t in query}
    scores, held = scorer.scores(docs, [scorer.shape(d.lengths) for d in docs], weights, idf)
    assert [s.hex() for s in scores] == [one_by_one(scorer, d, weights, idf).hex() for d in docs]
    assert held == [sum(1 << i for i, t in enumerate(query) if t in d.every) for d in docs]


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(doc_texts, min_size=1, max_size=12),
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
)
def test_rank_orders_as_scoring_each_document_twice(
    texts: list[tuple[str, str, str, str]], words: list[str]
) -> None:
    """The first pass, the feedback words, the second pass and coverage, as `rank` worked them
    out one document at a time until 2026-12-02."""
    docs = dict(enumerate((DocTerms.parse(t) for t in texts), start=1))
    config = EngineConfig()
    q = parse(" ".join(words))
    stats = stats_for(list(docs.values()))
    scorer = Bm25F(config.k1, config.b, (1.0, 0.8, 0.6, 0.5), stats.avg_lengths)
    query = q.weights(config.alternate_weight)
    idf = {t: stats.idf(t) for t in query}
    first = best_first((seq, one_by_one(scorer, d, query, idf)) for seq, d in docs.items())
    expected = first
    if len(first) >= 2:
        top = [(docs[seq], score) for seq, score in first[: config.feedback_docs]]
        words_found = feedback_candidates(
            top,
            query,
            depth=config.feedback_docs,
            count=config.feedback_terms * config.feedback_pool,
        )
        words_idf = {t: stats.idf(t) for t in words_found if stats.df.get(t, 0) > 0}
        expansion = feedback_terms(words_found, words_idf, config.feedback_terms)
        if expansion:
            extra = {t: config.feedback_weight for t in expansion}
            idf.update({t: words_idf[t] for t in expansion})
            boost = config.coverage_boost
            expected = best_first(
                (
                    seq,
                    (score + one_by_one(scorer, docs[seq], extra, idf))
                    * (1.0 + boost * coverage_of(q, docs[seq], stats)),
                )
                for seq, score in first
            )
    got = rank(None, q, list(docs), docs, stats_for(list(docs.values())), config=config)
    assert [(seq, score.hex()) for seq, score in got] == [
        (seq, score.hex()) for seq, score in expected
    ]
    assert all(math.isfinite(score) for _, score in got)
