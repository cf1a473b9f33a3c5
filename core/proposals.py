"""A write that waits for a person: the suggestion it becomes, and the sentence the agent gets."""

from __future__ import annotations

from typing import Protocol

from core.model import Caller, Memory, WriteResult, WriteStatus
from core.suggestions import Flag, Op, Reason, Suggestion, new_suggestion_id
from core.writer import WriteTx


class Proposals(Protocol):
    """Where a write that waits for a person goes (the review queue)."""

    def propose(self, tx: WriteTx, caller: Caller, suggestion: Suggestion) -> Suggestion: ...


def suggestion_for(
    caller: Caller,
    memory: Memory,
    *,
    op: Op,
    target: Memory | None,
    reasons: tuple[Reason, ...],
    flags: tuple[Flag, ...],
    now: int,
    similar: tuple[str, ...] = (),
    replacement_id: str | None = None,
    note: str | None = None,
) -> Suggestion:
    """A proposal carrying `memory`'s fields (for a change, the target's new state).

    Of the expiry and the pin it keeps what the agent set: for a change of `target` (`memory` is
    its new state, the same id), a new expiry, a cleared one or a new pin - what the change left
    alone follows the memory as it will be when a person adopts. For a new memory (also one
    proposed as an update of the memory it resembles, or names by its dedupe key) its own time
    to live and a pin it asks for.
    """
    changing = target is not None and memory.id == target.id
    before = target if changing else None
    if before is not None and memory.expires_at == before.expires_at:
        expires_at = None  # left alone
    else:
        expires_at = memory.expires_at
    clear_expiry = (
        before is not None and before.expires_at is not None and memory.expires_at is None
    )
    pinned = memory.pinned if memory.pinned != (before.pinned if before else False) else None
    return Suggestion(
        id=new_suggestion_id(now),
        op=op,
        agent=caller.actor,
        verified=caller.verified,
        target_id=target.id if target else None,
        base_revision=target.revision if target else None,
        replacement_id=replacement_id,
        content=memory.content,
        summary=memory.summary,
        kind=memory.kind,
        scope=memory.scope,
        workspace_id=memory.workspace_id,
        session_id=memory.session_id,
        tags=memory.tags,
        keywords=memory.keywords,
        importance=memory.importance,
        ttl_seconds=(  # rounded up: the few ms since the memory was prepared are not a second
            max(1, -((now - expires_at) // 1000)) if expires_at is not None else None
        ),
        clear_expiry=clear_expiry,
        pinned=pinned,
        source=memory.source,
        origin=memory.origin.value if memory.origin else None,
        dedupe_key=memory.dedupe_key,
        reasons=reasons,
        flags=flags,
        similar=tuple(i for i in similar if target is None or i != target.id) if similar else (),
        note=note,
        first_seen=now,
        last_seen=now,
    )


def waiting_because(s: Suggestion) -> str:
    """One sentence for the agent: what it waits for, and why (rules, never content)."""
    parts = []
    for r in s.reasons:
        if r.code == "policy":
            parts.append(f"the capture policy asks ({r.detail})")
        elif r.code == "scanner":
            parts.append(f"the scanner flagged it ({r.detail})")
        elif r.code == "not_owner":
            parts.append(f"the memory is not this agent's ({r.detail})")
        elif r.code == "mass_forget":
            parts.append(f"forgetting this many is a mass deletion ({r.detail})")
        elif r.code == "similar":
            parts.append(f"it closely resembles {r.detail}, so it is proposed as its update")
        elif r.code == "feedback":
            parts.append(f"an agent said it is {r.detail}")
    why = "; ".join(parts) or "a person decides"
    seen = f" (seen {s.hits} times)" if s.hits > 1 else ""
    return f"waiting for a person's review{seen}: {why}"


def pending(
    proposals: Proposals, tx: WriteTx, caller: Caller, suggestion: Suggestion
) -> WriteResult:
    """Inside a write job: `suggestion` goes to `proposals`, and the caller is told it waits - with
    the suggestion's id and why."""
    kept = proposals.propose(tx, caller, suggestion)
    first = kept.reasons[0] if kept.reasons else Reason("policy", "ask")
    return WriteResult(
        WriteStatus.PENDING,
        suggestion_id=kept.id,
        reason=waiting_because(kept),
        reason_code=first.code,
        similar=kept.similar,
    )
