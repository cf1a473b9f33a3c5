"""The agent protocol: every method, its parameters, its result shape, and who may call it.

Adapters receive raw JSON-RPC; `core.connection` parses frames and hands each request to
`core.dispatch`, which looks up the method here, checks the connection's role, parses the
parameters once into typed requests, and calls the service layer with the connection's `Caller` -
the binding set at `hello`. Nothing in this module talks to SQLite; everything goes through the
services.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import PROTOCOL_VERSION, __version__
from core.agents import AgentStatus, Identity, check_name, token_hash
from core.errors import (
    Forbidden,
    InvalidInput,
    IOFault,
    MethodNotFound,
    NotFound,
    StoreBusy,
    Unauthenticated,
)
from core.model import Caller, ListFilter, Scope, Status, Surface, Tier, Workspace, WriteResult
from core.protocol_governance import (
    Handler,
    archive_export,
    archive_import,
    backup_create,
    identity_edit,
    identity_get,
    identity_history,
    identity_list,
    identity_propose,
    identity_revert_apply,
    identity_revert_preview,
    policy_get,
    policy_set,
    review_adopt,
    review_get,
    review_list,
    review_many,
    review_reject,
    scanner_allow,
    scanner_allowed,
    scanner_unallow,
    workspace_list,
    workspace_merge,
    workspace_move,
)
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
from core.validation import MAX_SESSION_CHARS, SESSION_CONTROL
from core.workspace import canonical_path

if TYPE_CHECKING:
    from core.app import Cairn
    from core.runtime import Peer

log = logging.getLogger(__name__)

SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)


@dataclass
class Session:
    """One connection: how it arrived, and the binding its `hello` established."""

    transport: str  # "unix" or "tcp"
    peer: Peer | None = None
    caller: Caller | None = None
    workspace: Workspace | None = None
    subscribed: bool = False
    subscribed_after: int = 0  # the seq `changes.subscribe` answered: pushes start after it
    hello_done: bool = False
    token_hash: str | None = None  # the token a verified agent proved itself with at hello

    @property
    def human(self) -> bool:
        return self.caller is not None and self.caller.surface is Surface.HUMAN

    def bound(self) -> Caller:
        if self.caller is None:
            raise Unauthenticated("send hello first")
        return self.caller


@dataclass(frozen=True)
class Method:
    name: str
    handler: Handler
    summary: str
    human: bool = False  # only a person's connection may call it
    write: bool = False  # counts as a write in activity
    search: bool = False


# -- memory -------------------------------------------------------------------------------------


def _write(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    return cairn.memories.write(s.bound(), WriteRequest.from_params(p)).to_dict()


def _update(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    return cairn.memories.update(s.bound(), UpdateRequest.from_params(p)).to_dict()


def _get(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _list(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _search(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _supersede(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _forget(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _feedback(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "verdict", "note"}), required=("id", "verdict"))
    fid, suggestion = cairn.memories.feedback(
        s.bound(), text(p, "id"), text(p, "verdict"), opt_text(p, "note")
    )
    out: dict[str, Any] = {"recorded": True, "feedback_id": fid}
    if suggestion is not None:
        out["suggestion_id"] = suggestion  # a person will look at the memory
    return out


def _contradict(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"id", "other", "note"}), required=("id", "other"))
    rel = cairn.memories.mark_contradiction(
        s.bound(), text(p, "id"), text(p, "other"), opt_text(p, "note")
    )
    return rel.to_dict()


def _resolve(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"relation", "keep", "note"}), required=("relation", "keep"))
    rel = cairn.memories.resolve_contradiction(
        s.bound(), integer(p, "relation"), text(p, "keep"), opt_text(p, "note")
    )
    return rel.to_dict()


def _context(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


# -- changes, health, capabilities -------------------------------------------------------------


def _changes_since(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
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


def _subscribe(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    seq = cairn.store.seen_seq()
    s.subscribed_after, s.subscribed = seq, True
    return {"subscribed": True, "seq": seq}


def _unsubscribe(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    s.subscribed = False
    return {"subscribed": False}


def _health(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return cairn.health.snapshot(s.bound())


def _capabilities(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return capabilities(cairn, s)


def capabilities(cairn: Cairn, s: Session) -> dict[str, Any]:
    """What this connection may call, and the server's limits (only implemented methods)."""
    return {
        "protocol_version": PROTOCOL_VERSION,
        "supported_versions": list(SUPPORTED_VERSIONS),
        "server_version": __version__,
        "methods": sorted(["hello", *(m.name for m in METHODS.values() if s.human or not m.human)]),
        "limits": cairn.server_limits(),
        "batches": False,
    }


# -- people's methods --------------------------------------------------------------------------


def _agent_add(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset({"name"}), required=("name",))
    agent, token = cairn.agents.add(s.bound(), check_name(p["name"]))
    return agent.to_dict() | {"token": token, "stored_in": cairn.agents.tokens.where}


def _agent_list(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return {"agents": [a.to_dict() for a in cairn.agents.list()]}


def _agent_status(status: AgentStatus) -> Handler:
    def handler(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
        check_fields(p, frozenset({"name"}), required=("name",))
        return cairn.agents.set_status(s.bound(), check_name(p["name"]), status).to_dict()

    return handler


def _shutdown(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    cairn.request_shutdown("asked by a person's connection")
    return {"stopping": True}


def _status(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return cairn.status(s.bound())


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("capabilities", _capabilities, "protocol version, methods, limits"),
        Method("memory.write", _write, "store a memory", write=True),
        Method("memory.update", _update, "change a memory (if_revision required)", write=True),
        Method("memory.get", _get, "one memory, optionally with its history"),
        Method("memory.list", _list, "memories newest first, cursor paging"),
        Method("memory.search", _search, "search the connection's horizon", search=True),
        Method("memory.supersede", _supersede, "replace a memory, keeping both", write=True),
        Method("memory.forget", _forget, "forget a memory for good", write=True),
        Method("memory.feedback", _feedback, "say a memory was useful, wrong or stale", write=True),
        Method("memory.contradict", _contradict, "record that two memories disagree", write=True),
        Method("context.build", _context, "a context bundle under a byte budget", search=True),
        Method("changes.since", _changes_since, "audited changes after a sequence number"),
        Method("changes.subscribe", _subscribe, "push `changes` notifications"),
        Method("changes.unsubscribe", _unsubscribe, "stop pushing changes"),
        Method("health.get", _health, "the health snapshot (agents: their own share)"),
        Method("status", _status, "pid, socket, version and counts"),
        Method("memory.resolve", _resolve, "close a contradiction", human=True, write=True),
        Method("agent.add", _agent_add, "register an agent and issue its token", human=True),
        Method("agent.list", _agent_list, "every agent and its status", human=True),
        Method("agent.pause", _agent_status(AgentStatus.PAUSED), "pause an agent", human=True),
        Method("agent.resume", _agent_status(AgentStatus.ACTIVE), "resume an agent", human=True),
        Method("agent.revoke", _agent_status(AgentStatus.REVOKED), "revoke an agent", human=True),
        Method("daemon.shutdown", _shutdown, "stop this Cairn cleanly", human=True),
        Method("policy.get", policy_get, "the capture policy (agents: what it means for them)"),
        Method("policy.set", policy_set, "change one policy setting", human=True, write=True),
        Method("review.list", review_list, "proposals waiting for a person", human=True),
        Method("review.get", review_get, "one proposal and what it would change", human=True),
        Method(
            "review.adopt", review_adopt, "adopt a proposal, maybe edited", human=True, write=True
        ),
        Method("review.reject", review_reject, "reject a proposal", human=True, write=True),
        Method(
            "review.adopt_many",
            review_many(True),
            "adopt several proposals",
            human=True,
            write=True,
        ),
        Method("review.reject_many", review_many(False), "reject several", human=True, write=True),
        Method("scanner.allow", scanner_allow, "let one scanner finding pass", human=True),
        Method("scanner.unallow", scanner_unallow, "stop letting a finding pass", human=True),
        Method("scanner.allowed", scanner_allowed, "the findings let through", human=True),
        Method("workspace.list", workspace_list, "workspaces and their folders", human=True),
        Method("workspace.move", workspace_move, "a project moved", human=True, write=True),
        Method(
            "workspace.merge",
            workspace_merge,
            "fold a workspace into another",
            human=True,
            write=True,
        ),
        Method("backup.create", backup_create, "back up the store now", human=True),
        Method("archive.export", archive_export, "write an archive of everything", human=True),
        Method(
            "archive.import",
            archive_import,
            "bring an archive or JSON lines in",
            human=True,
            write=True,
        ),
        Method("identity.get", identity_get, "an identity document (soul or user)"),
        Method("identity.propose", identity_propose, "propose a new identity version", write=True),
        Method("identity.list", identity_list, "every identity document", human=True),
        Method("identity.history", identity_history, "every version of one", human=True),
        Method("identity.edit", identity_edit, "write a new version", human=True, write=True),
        Method(
            "identity.revert_preview",
            identity_revert_preview,
            "the diff and token of a revert",
            human=True,
        ),
        Method(
            "identity.revert_apply",
            identity_revert_apply,
            "apply a previewed revert",
            human=True,
            write=True,
        ),
    )
}


def lookup(name: str, session: Session) -> Method:
    """The method, if it exists and this connection may call it.

    Raises:
        MethodNotFound: no such method (or it belongs to a capability not implemented yet).
        Forbidden: a person's method called from an agent's connection.
    """
    method = METHODS.get(name)
    if method is None:
        raise MethodNotFound(f"no method {name!r}; `capabilities` lists the available ones")
    if method.human and not session.human:
        raise Forbidden(
            f"{name} is for people, not agents: agents propose, humans decide",
            data={"method": name},
        )
    return method


# -- hello -------------------------------------------------------------------------------------

_HELLO_FIELDS = frozenset(
    {"protocol_version", "agent", "token", "workspace", "session", "role", "client", "enroll"}
)


def _session_id(p: Mapping[str, Any]) -> str | None:
    session_id = opt_text(p, "session")
    if session_id is not None and len(session_id) > MAX_SESSION_CHARS:
        raise InvalidInput(
            f"session ids are at most {MAX_SESSION_CHARS} characters", data={"field": "session"}
        )
    if session_id is not None and SESSION_CONTROL.search(session_id):
        raise InvalidInput(
            "a session id may not hold control characters", data={"field": "session"}
        )
    return session_id


def _bookkeeping(record: Callable[..., None], *args: Any) -> None:
    """Record that an agent or a session was seen - or, when the store cannot be written (a full
    disk, a read-only file), log it and go on: a connection that only reads still works."""
    try:
        record(*args)
    except (IOFault, StoreBusy) as e:
        log.warning("could not record a connection's hello (%s); it is served anyway", e.message)


def _who(
    cairn: Cairn,
    session: Session,
    p: Mapping[str, Any],
    role: str,
    human_allowed: Callable[[Session], str | None],
) -> tuple[Identity | None, dict[str, Any] | None]:
    """The agent a hello speaks for (None: a person), and what enrolling it gave."""
    if role == "human":
        reason = human_allowed(session)
        if reason is not None:
            raise Forbidden(reason)
        return None, None
    if flag(p, "enroll", default=False):
        return _enroll(cairn, session, p)
    require = session.transport == "tcp" or cairn.settings.flag("security.require_tokens")
    return cairn.agents.authenticate(p.get("agent"), p.get("token"), require_token=require), None


def hello(
    cairn: Cairn,
    session: Session,
    p: Mapping[str, Any],
    *,
    human_allowed: Callable[[Session], str | None],
) -> dict[str, Any]:
    """Bind a connection: protocol version, who (agent name and token, or a person), one
    canonical workspace, one session. `human_allowed` returns None when a person's connection
    is acceptable here, or the reason it is not.

    Raises:
        InvalidInput, Unauthenticated, AgentPaused, AgentRevoked, Forbidden.
    """
    if session.hello_done:
        raise InvalidInput("hello was already accepted on this connection")
    check_fields(p, _HELLO_FIELDS, required=("protocol_version",))
    version = integer(p, "protocol_version")
    if version not in SUPPORTED_VERSIONS:
        raise InvalidInput(
            f"protocol version {version} is not supported; this Cairn speaks "
            f"{', '.join(map(str, SUPPORTED_VERSIONS))}",
            data={"field": "protocol_version", "supported": list(SUPPORTED_VERSIONS)},
        )
    role = p.get("role", "agent")
    if role not in ("agent", "human"):
        raise InvalidInput("role must be 'agent' or 'human'", data={"field": "role"})
    # On TCP (where anyone on the machine may connect) who is asking is checked first, so a
    # wrong token gets the same answer whatever workspace or session it carries: it learns
    # nothing about the owner's folders (until 2026-11-30 the path was looked at first, so a
    # wrong token could tell an existing folder from a missing one). On the Unix socket the
    # peer is the owner, and the path and session are checked first, as before.
    who_first = session.transport != "unix"
    if who_first:
        identity, enrolled = _who(cairn, session, p, role, human_allowed)
    session_id = _session_id(p)
    raw_workspace = opt_text(p, "workspace")
    # A bad path, or an identifier holding a secret, is refused before anything is recorded:
    # canonical_path refuses a path and check_name (in _who) a name holding one, at every door.
    if raw_workspace is not None:
        canonical_path(raw_workspace)
    cairn.gate.refuse_secret({"session": session_id})
    if not who_first:
        identity, enrolled = _who(cairn, session, p, role, human_allowed)
    # Only a connection that is let in registers its workspace (and a declared agent name).
    workspace = cairn.workspaces.resolve(raw_workspace) if raw_workspace is not None else None
    workspace_id = workspace.id if workspace else None
    if identity is None:
        caller = Caller(Surface.HUMAN, workspace_id=workspace_id, session_id=session_id)
    else:
        _bookkeeping(cairn.agents.seen, identity)
        caller = Caller(
            Surface.AGENT,
            agent=identity.name,
            verified=identity.verified,
            workspace_id=workspace_id,
            session_id=session_id,
            self_enrolled=identity.self_enrolled,
        )
    session.caller = caller
    session.workspace = workspace
    session.token_hash = identity.token_hash if identity is not None else None
    session.hello_done = True
    if session_id is not None:  # the session is alive: its scratch memories do not expire
        _bookkeeping(cairn.lifecycle.session_seen, session_id, workspace_id)
    caps = capabilities(cairn, session)
    out = {
        "protocol_version": PROTOCOL_VERSION,
        "server_version": __version__,
        "role": role,
        "agent": caller.agent,
        "verified": caller.verified,
        "workspace": workspace.path if workspace else None,
        "workspace_id": workspace_id,
        "session": session_id,
        "methods": caps["methods"],
        "limits": caps["limits"],
    }
    if enrolled is not None:
        out["enrolled"] = enrolled
    return out


def _enroll(
    cairn: Cairn, session: Session, p: Mapping[str, Any]
) -> tuple[Identity, dict[str, Any]]:
    """`hello {enroll: true}`: a brand-new agent name registers itself and gets its token.

    Only on the Unix socket - where the server already refused any peer that is not this user -
    and only while `security.require_tokens` is off (with it on, a person registers every
    agent). The name must never have been seen (`AgentService.enroll`).
    """
    if p.get("token") is not None:
        raise InvalidInput("give a token or ask to enroll, not both", data={"field": "enroll"})
    if session.transport != "unix":
        raise Forbidden(
            "an agent can enroll itself only over the Unix socket; on TCP a person registers "
            "it with `cairn agent add`"
        )
    if cairn.settings.flag("security.require_tokens"):
        raise Forbidden(
            "security.require_tokens is on, so a person registers every agent: run "
            "`cairn agent add <name>` (the token goes to the token store the bridge reads)"
        )
    agent, token = cairn.agents.enroll(check_name(p.get("agent")))
    identity = Identity(agent.name, verified=True, self_enrolled=True, token_hash=token_hash(token))
    return identity, {"token": token, "stored_in": cairn.agents.tokens.where}


def check_agent_allowed(cairn: Cairn, session: Session) -> None:
    """Refuse requests from an agent paused or revoked since its hello."""
    caller = session.caller
    if caller is None or caller.surface is not Surface.AGENT or caller.agent is None:
        return
    # None for a declared name the store could not record at hello (a full disk): unpaused
    known = cairn.agents.check_connection(caller.agent, session.token_hash)
    if known is None and caller.verified:
        raise NotFound("this connection's agent no longer exists")
