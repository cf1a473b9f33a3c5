"""What a search returns: its hits, their presence signal, and the result as a whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from core.model import Memory, Relation, Status


class Presence(StrEnum):
    STRONG = "strong"
    WEAK = "weak"
    NONE = "none"


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
