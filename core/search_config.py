"""The search engine's configuration: every knob that changes what a search returns, and its
hash."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass

from core.search_index import index_fingerprint
from core.spelling import SPELLING_VERSION
from core.tokenizer import TOKENIZER_VERSION


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
    cjk_pairs_find: int = 1  # and Thai, Lao, Khmer, Myanmar cluster pairs (tokenizer 7)
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
