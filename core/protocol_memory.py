"""The protocol's memory methods - `memory.*`, `context.build` and the change feed
(`changes.*`) - each a handler like those in `core.protocol_governance`: it parses its parameters
once into a typed request and calls the memory, search or context service with the connection's
`Caller`; `core.protocol` lists them in its method table (with who may call them)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from core.errors import InvalidInput
from core.model import ListFilter, Scope, Status, Tier, WriteResult
from core.requests import (
    UpdateRequest,
    WriteRequest,
    check_fields,
    choice,
    choices,
    flag,
    integer,
    opt_integer,
    opt_text,
    strings,
    text,
)
from core.search import Horizon, SearchRequest

if TYPE_CHECKING:
    from core.app import Cairn
    from core.protocol import Session


def memory_write(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    return cairn.memories.write(s.bound(), WriteRequest.from_params(p)).to_dict()


def memory_update(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    return cairn.memories.update(s.bound(), UpdateRequest.from_params(p)).to_dict()


def memory_get(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "history", "raw"}), required=("id",))
    history = flag(p, "history", default=False)
    detail = cairn.memories.get(
        s.bound(), text(p, "id"), history=history, raw=flag(p, "raw", default=False)
    )
    out = detail.memory.to_dict()
    if history:
        out["revisions"] = [r.to_dict() for r in detail.revisions]
        out["relations"] = [r.to_dict() for r in detail.relations]
    return out


def _one_or_many(value: Any, name: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    return list(strings(value, name))


_LIST_FIELDS = frozenset(
    {"scope", "kind", "status", "tier", "agent", "tags", "limit", "cursor", "include_expired"}
)


def _known_kinds(cairn: Cairn, kinds: Iterable[str], field: str) -> frozenset[str]:
    """A filter's kinds, each a kind this Cairn knows: a misspelt one ("preferences") would
    match nothing and look like an empty store, as an unknown scope or status is refused."""
    known = cairn.memories.limits.kinds
    for kind in kinds:
        if kind not in known:
            raise InvalidInput(
                f"unknown kind {kind!r} (expected one of: {', '.join(known)})",
                data={"field": field},
            )
    return frozenset(kinds)


def memory_list(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, _LIST_FIELDS, required=())
    statuses = choices(_one_or_many(p.get("status"), "status") or None, "status", Status)
    flt = ListFilter(
        scopes=choices(_one_or_many(p.get("scope"), "scope") or None, "scope", Scope),
        kinds=_known_kinds(cairn, _one_or_many(p.get("kind"), "kind"), "kind"),
        statuses=statuses or ListFilter().statuses,
        tiers=choices(_one_or_many(p.get("tier"), "tier") or None, "tier", Tier),
        agents=frozenset(_one_or_many(p.get("agent"), "agent")),
        tags=frozenset(t.lower() for t in _one_or_many(p.get("tags"), "tags")),
        include_expired=flag(p, "include_expired", default=False),
    )
    page = cairn.memories.list(
        s.bound(), flt, limit=integer(p, "limit", default=50), cursor=opt_text(p, "cursor")
    )
    return {"items": [m.to_dict() for m in page.items], "next_cursor": page.next_cursor}


_SEARCH_FIELDS = frozenset(
    {
        "query",
        "limit",
        "variants",
        "horizon",
        "include_history",
        "include_expired",
        "kinds",
        "scopes",
        "min_commit_seq",
    }
)


def memory_search(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, _SEARCH_FIELDS, required=("query",))
    req = SearchRequest(
        query=text(p, "query"),
        limit=integer(p, "limit", default=10),
        variants=strings(p.get("variants"), "variants"),
        horizon=choice(p.get("horizon", "default"), "horizon", Horizon),
        include_history=flag(p, "include_history", default=False),
        include_expired=flag(p, "include_expired", default=False),
        kinds=_known_kinds(cairn, strings(p.get("kinds"), "kinds"), "kinds"),
        scopes=choices(p.get("scopes"), "scopes", Scope),
        min_commit_seq=opt_integer(p, "min_commit_seq"),
    )
    return cairn.search.search(s.bound(), req).to_dict()


def memory_supersede(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(p, Mapping) or "id" not in p:
        raise InvalidInput("field 'id' is required", data={"field": "id"})
    rest = {k: v for k, v in p.items() if k not in ("id", "by", "reason")}
    by = p.get("by")
    reason = opt_text(p, "reason")
    if by is not None:
        if rest:
            raise InvalidInput(
                "give either 'by' (an existing memory id) or the new memory's fields, not both"
            )
        result = cairn.memories.supersede(
            s.bound(), text(p, "id"), by_id=text(p, "by"), reason=reason
        )
    else:
        replacement = WriteRequest.from_params(rest)
        result = cairn.memories.supersede(
            s.bound(), text(p, "id"), replacement=replacement, reason=reason
        )
    if isinstance(result, WriteResult):  # waiting for a person, or refused
        return result.to_dict()
    return {
        "status": "stored",
        "old": {"id": result.old.id, "revision": result.old.revision, "status": result.old.status},
        "new": {"id": result.new.id, "revision": result.new.revision},
    }


def memory_forget(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "reason"}), required=("id",))
    tomb = cairn.memories.forget(s.bound(), text(p, "id"), opt_text(p, "reason"))
    if isinstance(tomb, WriteResult):  # waiting for a person, or refused
        return tomb.to_dict()
    return {
        "status": "forgotten",
        "forgotten": tomb.memory_id,
        "at": tomb.forgotten_at,
        "by": tomb.forgotten_by,
    }


def memory_feedback(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "verdict", "note"}), required=("id", "verdict"))
    fid, suggestion = cairn.memories.feedback(
        s.bound(), text(p, "id"), text(p, "verdict"), opt_text(p, "note")
    )
    out: dict[str, Any] = {"recorded": True, "feedback_id": fid}
    if suggestion is not None:
        out["suggestion_id"] = suggestion  # a person will look at the memory
    return out


def memory_contradict(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "other", "note"}), required=("id", "other"))
    rel = cairn.memories.mark_contradiction(
        s.bound(), text(p, "id"), text(p, "other"), opt_text(p, "note")
    )
    return rel.to_dict()


def memory_resolve(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"relation", "keep", "note"}), required=("relation", "keep"))
    rel = cairn.memories.resolve_contradiction(
        s.bound(), integer(p, "relation"), text(p, "keep"), opt_text(p, "note")
    )
    return rel.to_dict()


def context_build(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    from core.context_bundle import ContextRequest

    check_fields(
        p,
        frozenset({"query", "max_bytes", "limit", "variants", "tiers", "horizon"}),
        required=("query",),
    )
    tiers = choices(p.get("tiers"), "tiers", Tier) if p.get("tiers") is not None else None
    req = ContextRequest(
        query=text(p, "query"),
        max_bytes=opt_integer(p, "max_bytes"),
        limit=integer(p, "limit", default=20),
        variants=strings(p.get("variants"), "variants"),
        tiers=tiers,
        horizon=choice(p.get("horizon", "default"), "horizon", Horizon),
    )
    return cairn.context.build(s.bound(), req).to_dict()


def changes_since(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"seq", "limit"}), required=("seq",))
    limit = integer(p, "limit", default=500)
    if not 1 <= limit <= 5000:
        raise InvalidInput("limit must be between 1 and 5000", data={"field": "limit"})
    feed = cairn.memories.changes_since(s.bound(), integer(p, "seq"), limit=limit)
    return {
        "changes": [c.to_dict() for c in feed.changes],
        "last_seq": feed.last_seq,
        "gap": feed.gap,
    }


def changes_subscribe(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    seq = cairn.store.seen_seq()
    s.subscribed_after, s.subscribed = seq, True
    return {"subscribed": True, "seq": seq}


def changes_unsubscribe(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    s.subscribed = False
    return {"subscribed": False}
