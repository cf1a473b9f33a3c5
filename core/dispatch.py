"""Requests after the hello: the binding checks, the method table's service call, and what each
request and each refusal counts in the activity counters.

Runs on a pool thread, never on the event loop (`core.connection` hands requests here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core import protocol
from core.errors import CairnError, ErrorCode, InvalidRequest
from core.model import WriteStatus

if TYPE_CHECKING:
    from core.app import Cairn

_REFUSAL_CODES = {
    ErrorCode.TOO_LARGE,
    ErrorCode.SCOPE_DENIED,
    ErrorCode.POLICY_REFUSED,
    ErrorCode.CAPTURE_PAUSED,
    ErrorCode.FORGOTTEN,
    ErrorCode.FORBIDDEN,
    # since 2026-11-30 (docs/health.md always listed them): a wrong token, a request before
    # hello, and an agent paused or revoked since its hello
    ErrorCode.UNAUTHENTICATED,
    ErrorCode.AGENT_PAUSED,
    ErrorCode.AGENT_REVOKED,
}


def call(
    cairn: Cairn, session: protocol.Session, name: str, params: dict[str, Any]
) -> dict[str, Any]:
    """On a pool thread: check, run, count. Every request counts, failed or not (until
    2026-11-30 only those that succeeded); only a write or search served moves `writes`,
    `last_write` and `last_search` - a write refused is none."""
    caller = session.bound()
    served: protocol.Method | None = None
    wrote = False
    try:
        if name == "hello":
            raise InvalidRequest(
                "hello was already accepted on this connection; open another connection to "
                "speak as another agent or in another workspace"
            )
        method = protocol.lookup(name, session)
        protocol.check_agent_allowed(cairn, session)
        result = method.handler(cairn, session, params)
        served = method
        # A write refused (a secret, a forgotten text...) stored nothing: it is no
        # write and moves no `last_write`, which after a restart is read back from the
        # store's events (until 2026-12-01 it counted, and the two disagreed).
        wrote = method.write and result.get("status") != WriteStatus.REFUSED.value
    finally:
        cairn.activity.request(
            caller.agent if caller.agent else None,
            verified=caller.verified,
            at_ms=cairn.clock.now_ms(),
            write=wrote,
            search=served is not None and served.search,
        )
    if result.get("status") == "refused":
        cairn.activity.refusal(caller.agent, str(result.get("reason_code", "refused")))
    elif result.get("status") == "pending":
        first = str(result.get("reason_code", "policy"))
        waiting = result.get("suggestion_id")
        reasons = cairn.review.reasons_of(waiting) if isinstance(waiting, str) else ()
        for reason in reasons or (first,):  # every reason, `similar` included
            cairn.activity.hold(reason)
    return result


def count_refusal(cairn: Cairn, session: protocol.Session, error: CairnError) -> None:
    """Count a request refused with one of the refusal codes (docs/health.md), under its agent."""
    if error.code in _REFUSAL_CODES:
        caller = session.caller
        cairn.activity.refusal(caller.agent if caller else None, error.code.label)


def count_hello_refusal(cairn: Cairn, error: CairnError, params: dict[str, Any]) -> None:
    """Count a hello refused with one of the refusal codes (docs/health.md)."""
    if error.code in _REFUSAL_CODES:
        cairn.activity.refusal(
            _refused_agent(error), error.code.label, verified=params.get("token") is not None
        )


def _refused_agent(error: CairnError) -> str | None:
    """The agent a hello's refusal counts under: the one named by `agent_paused` or
    `agent_revoked` - its token matched (a token is checked before the agent's standing) or,
    without one, the name is declared, as every request of a declared name counts under it. A
    wrong token or a missing one (`unauthenticated`) is no agent's own. Until 2026-12-01 none
    counted under its agent."""
    if error.code not in (ErrorCode.AGENT_PAUSED, ErrorCode.AGENT_REVOKED):
        return None
    agent = error.data.get("agent")
    return agent if isinstance(agent, str) else None


__all__ = ["call", "count_hello_refusal", "count_refusal"]
