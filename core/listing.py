"""Listing memories: the filter SQL and the opaque, filter-bound cursor for stable paging.

The cursor is the creation sequence (`memory.seq`) of the last item shown, plus a digest of the
filters it was issued for. New memories get a higher sequence than every existing one, so they
appear before the first page and never inside a walk that is under way.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from core.agents import NAME
from core.errors import InvalidInput
from core.horizon import horizon_sql
from core.model import Caller, ListFilter
from core.records import SELECT_MEMORY

MAX_LIST_LIMIT = 500


def list_query(
    caller: Caller, flt: ListFilter, *, now_ms: int, after_seq: int | None, limit: int
) -> tuple[str, list[Any]]:
    """The SELECT for one page (newest first), fetching one extra row to tell if more follow.

    Raises:
        InvalidInput: an agent to filter by that is not an agent name.
    """
    check_agents(flt.agents)
    where, params = horizon_sql(caller)
    clauses = [where]
    args: list[Any] = list(params)
    if not caller.is_human:
        clauses.append("m.status != 'forgotten'")
    _in(clauses, args, "m.status", sorted(s.value for s in flt.statuses))
    _in(clauses, args, "m.scope", sorted(s.value for s in flt.scopes))
    _in(clauses, args, "m.kind", sorted(flt.kinds))
    _in(clauses, args, "m.tier", sorted(t.value for t in flt.tiers))
    _in(clauses, args, "m.agent", sorted(flt.agents))
    _in(clauses, args, "m.workspace_id", sorted(flt.workspace_ids))
    for tag in sorted(flt.tags):
        clauses.append("EXISTS (SELECT 1 FROM json_each(m.tags) WHERE json_each.value = ?)")
        args.append(tag)
    if not flt.include_expired:
        clauses.append("(m.expires_at IS NULL OR m.expires_at > ?)")
        args.append(now_ms)
    if after_seq is not None:
        clauses.append("m.seq < ?")
        args.append(after_seq)
    sql = SELECT_MEMORY + " WHERE " + " AND ".join(clauses) + " ORDER BY m.seq DESC LIMIT ?"
    args.append(limit + 1)
    return sql, args


def _in(clauses: list[str], args: list[Any], column: str, values: list[str]) -> None:
    if values:
        clauses.append(f"{column} IN ({', '.join('?' for _ in values)})")
        args.extend(values)


def check_agents(agents: Iterable[str]) -> None:
    """Refuse an agent filter no memory could match because it is no agent's name ("Bad
    Name"): it answered an empty page, as if the agent had written nothing (until 2026-11-30)."""
    for name in sorted(agents):
        if not NAME.fullmatch(name):
            raise InvalidInput(
                f"{name!r} is not an agent name (1-64 lower-case letters, digits, '.', '_' or "
                "'-', starting with a letter or digit), so no memory could match it",
                data={"field": "agent"},
            )


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInput(
            f"limit must be between 1 and {MAX_LIST_LIMIT}, got {limit}", data={"field": "limit"}
        )
    return limit


def filter_digest(flt: ListFilter) -> str:
    blob = json.dumps(
        {
            "scopes": sorted(s.value for s in flt.scopes),
            "ws": sorted(flt.workspace_ids),
            "kinds": sorted(flt.kinds),
            "statuses": sorted(s.value for s in flt.statuses),
            "tiers": sorted(t.value for t in flt.tiers),
            "agents": sorted(flt.agents),
            "tags": sorted(flt.tags),
            "expired": flt.include_expired,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def encode_cursor(seq: int, digest: str) -> str:
    raw = json.dumps({"s": seq, "f": digest}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, digest: str) -> int:
    """The sequence a cursor points after. Raises InvalidInput for a forged or foreign cursor."""
    forged = InvalidInput("cursor is not one Cairn issued", data={"field": "cursor"})
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        seq, fdigest = data["s"], str(data["f"])
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeDecodeError):
        raise forged from None
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq < 2**63:
        raise forged
    if fdigest != digest:
        raise InvalidInput(
            "cursor belongs to a listing with different filters; start again without a cursor",
            data={"field": "cursor"},
        )
    return seq
