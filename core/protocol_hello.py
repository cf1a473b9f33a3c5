"""The hello: binding a connection to who speaks (an agent, verified or enrolling itself, or a
person), one canonical workspace and one session, before any other method is served."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from core import PROTOCOL_VERSION, __version__
from core.agents import Identity, check_name, token_hash
from core.errors import Forbidden, InvalidInput, IOFault, StoreBusy
from core.model import Caller, Surface, Workspace
from core.protocol import SUPPORTED_VERSIONS, Session, capabilities
from core.requests import check_fields, flag, integer, opt_text
from core.validation import MAX_SESSION_CHARS, SESSION_CONTROL
from core.workspace import canonical_path

if TYPE_CHECKING:
    from core.app import Cairn

log = logging.getLogger(__name__)

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
    workspace, unregistered, warning = _workspace(cairn, raw_workspace)
    workspace_id = workspace.id if workspace else None
    # A session's memories belong to it in one workspace: without the folder's id there are
    # none to see, and none may be stored under no workspace (they would be another binding's).
    bound_session = session_id if unregistered is None else None
    if identity is None:
        caller = Caller(
            Surface.HUMAN,
            workspace_id=workspace_id,
            session_id=bound_session,
            unregistered_folder=unregistered,
        )
    else:
        _bookkeeping(cairn.agents.seen, identity)
        caller = Caller(
            Surface.AGENT,
            agent=identity.name,
            verified=identity.verified,
            workspace_id=workspace_id,
            session_id=bound_session,
            self_enrolled=identity.self_enrolled,
            unregistered_folder=unregistered,
        )
    session.caller = caller
    session.workspace = workspace
    session.token_hash = identity.token_hash if identity is not None else None
    session.hello_done = True
    if bound_session is not None:  # the session is alive: its scratch memories do not expire
        _bookkeeping(cairn.lifecycle.session_seen, bound_session, workspace_id)
    caps = capabilities(cairn, session)
    out = {
        "protocol_version": PROTOCOL_VERSION,
        "server_version": __version__,
        "role": role,
        "agent": caller.agent,
        "verified": caller.verified,
        "workspace": workspace.path if workspace else unregistered,
        "workspace_id": workspace_id,
        "session": bound_session,  # none when the folder could not be registered (the warning)
        "methods": caps["methods"],
        "limits": caps["limits"],
    }
    if warning is not None:
        out["warning"] = warning
    if enrolled is not None:
        out["enrolled"] = enrolled
    return out


def _workspace(
    cairn: Cairn, raw_workspace: str | None
) -> tuple[Workspace | None, str | None, str | None]:
    """The workspace a hello binds, registering a folder never seen - or, when that write fails
    for the disk (`io_error`: full, read-only), no workspace, the folder's canonical path and a
    warning saying so: a connection that only reads still works (until 2026-12-02 the hello
    itself failed, so an agent starting in a new project could not even search)."""
    if raw_workspace is None:
        return None, None, None
    try:
        return cairn.workspaces.resolve(raw_workspace), None, None
    except IOFault as e:
        folder = canonical_path(raw_workspace)
        log.warning("could not register the workspace %s (%s); served without one", folder, e)
        return (
            None,
            folder,
            f"the folder {folder} could not be registered as a workspace: {e.message}. Until "
            "a new connection registers it, this one has no workspace id: it sees global and "
            "user memories, and project and session memories can be neither read nor written "
            "on it",
        )


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
