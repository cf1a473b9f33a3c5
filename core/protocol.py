"""The agent protocol's method table: every method, its handler, and who may call it; the
connection's binding (`Session`) and what it may call (`capabilities`).

Adapters receive raw JSON-RPC; `core.connection` parses frames, binds a connection at `hello`
(`core.protocol_hello`) and hands each later request to `core.dispatch`, which looks up the
method here, checks the connection's role, and calls its handler with the connection's `Caller`.
The handlers parse their parameters once into typed requests and call the service layer: the
memory methods are in `core.protocol_memory`, the governance, identity, backup and archive ones
in `core.protocol_governance`, the people's and the daemon's below. Nothing in these modules
talks to SQLite; everything goes through the services.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core import PROTOCOL_VERSION, __version__
from core.agents import AgentStatus, check_name
from core.errors import Forbidden, MethodNotFound, NotFound, Unauthenticated
from core.model import Caller, Surface, Workspace
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
from core.protocol_memory import (
    changes_since,
    changes_subscribe,
    changes_unsubscribe,
    context_build,
    memory_contradict,
    memory_feedback,
    memory_forget,
    memory_get,
    memory_list,
    memory_resolve,
    memory_search,
    memory_supersede,
    memory_update,
    memory_write,
)
from core.requests import check_fields

if TYPE_CHECKING:
    from core.app import Cairn
    from core.runtime import Peer

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


# -- health, status, capabilities --------------------------------------------------------------


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
        "methods": list(_METHOD_NAMES[s.human]),
        "limits": cairn.server_limits(),
        "batches": False,
    }


def _status(cairn: Cairn, s: Session, p: Mapping[str, Any]) -> dict[str, Any]:
    check_fields(p, frozenset(), required=())
    return cairn.status(s.bound())


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


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        Method("capabilities", _capabilities, "protocol version, methods, limits"),
        Method("memory.write", memory_write, "store a memory", write=True),
        Method(
            "memory.update", memory_update, "change a memory (if_revision required)", write=True
        ),
        Method("memory.get", memory_get, "one memory, optionally with its history"),
        Method("memory.list", memory_list, "memories newest first, cursor paging"),
        Method("memory.search", memory_search, "search the connection's horizon", search=True),
        Method("memory.supersede", memory_supersede, "replace a memory, keeping both", write=True),
        Method("memory.forget", memory_forget, "forget a memory for good", write=True),
        Method(
            "memory.feedback",
            memory_feedback,
            "say a memory was useful, wrong or stale",
            write=True,
        ),
        Method(
            "memory.contradict", memory_contradict, "record that two memories disagree", write=True
        ),
        Method("context.build", context_build, "a context bundle under a byte budget", search=True),
        Method("changes.since", changes_since, "audited changes after a sequence number"),
        Method("changes.subscribe", changes_subscribe, "push `changes` notifications"),
        Method("changes.unsubscribe", changes_unsubscribe, "stop pushing changes"),
        Method("health.get", _health, "the health snapshot (agents: their own share)"),
        Method("status", _status, "pid, socket, version and counts"),
        Method("memory.resolve", memory_resolve, "close a contradiction", human=True, write=True),
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


# What `capabilities` lists, for a person's connection (True) and an agent's: the table is fixed.
_METHOD_NAMES = {
    human: tuple(sorted(["hello", *(m.name for m in METHODS.values() if human or not m.human)]))
    for human in (True, False)
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


def check_agent_allowed(cairn: Cairn, session: Session) -> None:
    """Refuse requests from an agent paused or revoked since its hello."""
    caller = session.caller
    if caller is None or caller.surface is not Surface.AGENT or caller.agent is None:
        return
    # None for a declared name the store could not record at hello (a full disk): unpaused
    known = cairn.agents.check_connection(caller.agent, session.token_hash)
    if known is None and caller.verified:
        raise NotFound("this connection's agent no longer exists")
