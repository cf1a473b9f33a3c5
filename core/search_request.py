"""What a caller asks of a search: the request and its horizon."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.model import Scope, Status, Tier


class Horizon(StrEnum):
    """`default`: the caller's workspace, user and global memories, and its session.
    `all`: every workspace too (explicit broadening; people, or agents allowed to)."""

    DEFAULT = "default"
    ALL = "all"


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
