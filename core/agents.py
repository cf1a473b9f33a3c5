"""Agent identities: a name, an optional token (only its hash is stored), and a status.

A connection that presents an agent's token is *verified*; one that only declares a name is not,
and can claim nothing a verified agent was granted. Registering, pausing and revoking agents are
people's decisions. Tokens are random (256 bits), handed to the person once, and kept for local
clients in the keychain (`core.keychain`).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core import audit, old_names
from core.clock import FUTURE_SLACK_MS, Clock, before_floor
from core.errors import (
    AgentPaused,
    AgentRevoked,
    CairnError,
    Conflict,
    Forbidden,
    InvalidInput,
    NotFound,
    Unauthenticated,
)
from core.keychain import TokenStore
from core.model import RESERVED_AGENT_NAMES, Caller, Surface
from core.scanner import secret_rule
from core.store import Store
from core.writer import WriteTx

NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
TOKEN_PREFIX = "cairn_"  # noqa: S105 - a prefix that makes tokens recognisable, not a secret
SELF_ENROLLED = "self-enrolled"  # `created_by` of a name whose token the agent issued itself


class AgentStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    REVOKED = "revoked"


@dataclass(frozen=True)
class Agent:
    name: str
    status: AgentStatus
    has_token: bool
    created_at: int
    created_by: str
    last_seen_at: int | None

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "status": self.status.value,
            "has_token": self.has_token,
            "created_at": self.created_at,
            "created_by": self.created_by,
            "last_seen_at": self.last_seen_at,
        }


@dataclass(frozen=True)
class Identity:
    """Who a connection is, once its hello was accepted. `self_enrolled`: its token came from
    the agent's own enrollment, not from a person (it unlocks no per-agent policy override)."""

    name: str
    verified: bool
    self_enrolled: bool = False
    token_hash: str | None = None  # the hash of the token it proved itself with


def bring_back(tx: WriteTx, now_ms: int) -> int:
    """Set agents' last-seen times after now (`core.clock.after_now`) to now. Returns how many
    it set."""
    return tx.conn.execute(
        "UPDATE agent SET last_seen_at = ? WHERE last_seen_at > ?",
        (now_ms, now_ms + FUTURE_SLACK_MS),
    ).rowcount


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: object) -> str:
    if old_names.old_shape(name):  # `$` let it through until 2026-11-30 (core/old_names.py)
        raise InvalidInput(
            "the agent name ends in a line break, which no agent name may: leave it out (a "
            "store that held such a name renamed it: `cairn agent list` shows the new name)",
            data={"field": "agent"},
        )
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InvalidInput(
            "agent name must be 1-64 characters of lower-case letters, digits, '.', '_' or '-', "
            "starting with a letter or digit",
            data={"field": "agent"},
        )
    if name in RESERVED_AGENT_NAMES:
        raise InvalidInput(
            f"the agent name {name!r} is reserved: Cairn records people and itself by it; "
            "choose another name",
            data={"field": "agent"},
        )
    rule = secret_rule(name)
    if rule is not None:  # a name is shown to every agent: never a secret, whoever registers it
        raise InvalidInput(
            f"the agent name looks like a secret (rule {rule}); choose another name",
            data={"field": "agent", "rule": rule, "reason_code": "secret"},
        )
    return name


class AgentService:
    def __init__(self, store: Store, clock: Clock, tokens: TokenStore) -> None:
        self._store = store
        self._clock = clock
        self.tokens = tokens

    @staticmethod
    def _row(conn: sqlite3.Connection, name: str) -> tuple[Any, ...] | None:
        """(token_hash, status, created_at, created_by, last_seen_at) of one agent."""
        row = conn.execute(
            "SELECT token_hash, status, created_at, created_by, last_seen_at FROM agent "
            "WHERE name = ?",
            (name,),
        ).fetchone()
        return tuple(row) if row else None

    @staticmethod
    def _agent(name: str, row: tuple[Any, ...]) -> Agent:
        """An agent from its `_row`. A revoked agent keeps its token's hash (see set_status)
        but has no token that works."""
        status = AgentStatus(row[1])
        usable = row[0] is not None and status is not AgentStatus.REVOKED
        return Agent(name, status, usable, row[2], row[3], row[4])

    def get(self, name: str) -> Agent:
        row = self._row(self._store.read_db.conn(), check_name(name))
        if row is None:
            raise NotFound(f"agent {name!r} is not known", data={"agent": name})
        return self._agent(name, row)

    def list(self) -> list[Agent]:
        rows = self._store.read_db.conn().execute(
            "SELECT name, token_hash, status, created_at, created_by, last_seen_at FROM agent "
            "ORDER BY name"
        )
        return [self._agent(r[0], tuple(r[1:])) for r in rows]

    def add(self, caller: Caller, name: str) -> tuple[Agent, str]:
        """Register `name` with a fresh token (or give a token to a name so far only declared).
        Returns the agent and the token, which is shown once and kept in the token store.

        Raises:
            Forbidden: the caller is not a person.
            Conflict: the agent already has a token (revoke it first to issue a new one).
        """
        if not caller.is_human:
            raise Forbidden("only a person can register an agent")
        check_name(name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)

        def job(tx: WriteTx) -> Agent:
            row = self._row(tx.conn, name)
            if row is not None and row[0] is not None and row[1] != AgentStatus.REVOKED:
                raise Conflict(
                    f"agent {name!r} already has a token; revoke it to issue a new one",
                    data={"agent": name},
                )
            return self._issue(tx, name, token, actor=caller, created_by=caller.actor)

        return self._registered(job, name, token), token

    def enroll(self, name: str) -> tuple[Agent, str]:
        """Register a name never seen before, with a fresh token, at the agent's own request -
        how a local client (the MCP bridge) gets a verified identity on first use. Only the
        protocol's `hello` calls it, and only on the Unix socket, where the server has already
        checked that the peer runs as the same user. The token goes to the token store, like
        `add`'s; the audit event is `agent_add`, with the agent itself as the actor.

        Raises:
            Conflict: the name is already known - registered, declared, paused or revoked. A
                person decides about those (`cairn agent add|resume`).
        """
        check_name(name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        actor = Caller(Surface.AGENT, agent=name, verified=True)

        def job(tx: WriteTx) -> Agent:
            row = self._row(tx.conn, name)
            if row is not None:
                state = "registered" if row[0] is not None else "declared"
                if row[1] != AgentStatus.ACTIVE:
                    state = str(row[1])
                raise Conflict(
                    f"agent {name!r} is already known to Cairn ({state}), so it cannot enroll "
                    f"itself; a person can issue its token with `cairn agent add {name}`, or "
                    "choose another agent name",
                    data={"agent": name, "state": state},
                )
            return self._issue(tx, name, token, actor=actor, created_by=SELF_ENROLLED)

        return self._registered(job, name, token), token

    def _registered(self, job: Callable[[WriteTx], Agent], name: str, token: str) -> Agent:
        """Run a job that issues `token` to `name`. When it fails after the token store took
        the token - the commit failed, for a full disk say - the token is taken back: kept for
        a name the store never registered, its agent (the MCP bridge) would present it and be
        refused at every hello (until 2026-12-01 it was kept)."""
        try:
            return self._store.writer.run(job)
        except BaseException:
            with contextlib.suppress(CairnError, OSError):
                if self.tokens.get(name) == token:
                    self.tokens.delete(name)
            raise

    def _issue(
        self, tx: WriteTx, name: str, token: str, *, actor: Caller, created_by: str
    ) -> Agent:
        """Inside a write job: give `name` the token `token` (registering the name when it is
        new; a declared or revoked one keeps its first date and author - except that a
        self-enrolled name a person now issues a token for becomes the person's: its token, and
        so the policy's per-agent overrides, are vouched for from now on) and keep the token."""
        now = self._clock.now_ms()
        tx.conn.execute(
            "INSERT INTO agent (name, token_hash, status, created_at, created_by, "
            "token_created_at) VALUES (?, ?, 'active', ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET token_hash = excluded.token_hash, "
            "status = 'active', token_created_at = excluded.token_created_at, "
            "created_by = CASE WHEN agent.created_by = ? THEN excluded.created_by "
            "ELSE agent.created_by END",
            (name, token_hash(token), now, created_by, now, SELF_ENROLLED),
        )
        detail: dict[str, object] = {"agent": name}
        if actor.agent == name:
            detail["enrolled"] = True
        audit.record(tx, actor, "agent_add", detail=detail, at=now)
        # Stored inside the transaction: if the token store refuses, nothing is registered.
        self.tokens.set(name, token)
        row = self._row(tx.conn, name)
        assert row is not None
        return self._agent(name, row)

    def set_status(self, caller: Caller, name: str, status: AgentStatus) -> Agent:
        """Pause, resume (active) or revoke an agent. Revoking also removes its token."""
        if not caller.is_human:
            raise Forbidden("only a person can pause, resume or revoke an agent")
        check_name(name)

        def job(tx: WriteTx) -> Agent:
            now = self._clock.now_ms()
            row = self._row(tx.conn, name)
            if row is None:
                raise NotFound(f"agent {name!r} is not known", data={"agent": name})
            if row[1] == AgentStatus.REVOKED and status is not AgentStatus.REVOKED:
                raise Conflict(
                    f"agent {name!r} is revoked; register it again with `cairn agent add`",
                    data={"agent": name},
                )
            # A revoked agent keeps its token's hash, so the old token is answered "revoked"
            # rather than "unknown"; the token itself leaves the keychain below.
            tx.conn.execute("UPDATE agent SET status = ? WHERE name = ?", (status.value, name))
            audit.record(tx, caller, f"agent_{status.value}", detail={"agent": name}, at=now)
            return self._agent(name, (row[0], status.value, *row[2:]))

        agent = self._store.writer.run(job)
        if status is AgentStatus.REVOKED:
            self.tokens.delete(name)
        return agent

    def authenticate(self, name: object, token: object, *, require_token: bool) -> Identity:
        """Check a hello's agent name and token.

        Raises:
            Unauthenticated: a wrong token; no token where one is required; or no token for a
                name that has one (a declared name cannot borrow a registered identity).
            AgentPaused, AgentRevoked: the agent may not work now.
        """
        checked = check_name(name)
        if token is not None and not isinstance(token, str):
            raise Unauthenticated("token must be a string")
        row = self._row(self._store.read_db.conn(), checked)
        if token is None:
            if require_token:
                raise Unauthenticated(
                    "this connection needs an agent token (see `cairn agent add`)"
                )
            if row is not None and AgentStatus(row[1]) is AgentStatus.REVOKED:
                # its token is gone: asking for it would send the caller looking for nothing
                self.check_status(checked, AgentStatus.REVOKED)
            if row is not None and row[0] is not None:
                raise Unauthenticated(
                    f"agent {checked!r} is registered with a token; connect with it, or use "
                    "another name"
                )
            if row is not None:
                self.check_status(checked, AgentStatus(row[1]))
            return Identity(checked, verified=False)
        expected = row[0] if row is not None else None
        # Compare digests in constant time; an unknown name compares against a dummy digest.
        # The token is checked before the status, so a wrong token learns nothing about the name.
        if not hmac.compare_digest(token_hash(token), expected or "0" * 64) or expected is None:
            raise Unauthenticated(
                "the token does not belong to this agent - check the agent's name and its token "
                "(`cairn agent list` shows the agents; `cairn agent add` shows a token once, and "
                "a token stops working when its agent is revoked)"
            )
        assert row is not None
        self.check_status(checked, AgentStatus(row[1]))
        return Identity(
            checked,
            verified=True,
            self_enrolled=row[3] == SELF_ENROLLED,
            token_hash=expected,
        )

    @staticmethod
    def check_status(name: str, status: AgentStatus) -> None:
        if status is AgentStatus.PAUSED:
            raise AgentPaused(
                f"agent {name!r} is paused by its owner; its requests are refused until resumed",
                data={"agent": name},
            )
        if status is AgentStatus.REVOKED:
            raise AgentRevoked(f"agent {name!r} is revoked", data={"agent": name})

    def check_connection(self, name: str, token_hash: str | None) -> AgentStatus | None:
        """Refuse a request on a connection whose agent was paused or revoked since its hello,
        or whose token is no longer the agent's (revoked, then added again: a new token). None
        when the agent no longer exists.

        Raises:
            AgentPaused, AgentRevoked: the agent may not work now on this connection.
        """
        status = self.status(name, token_hash)
        if status is AgentStatus.REVOKED and self.status(name) is not AgentStatus.REVOKED:
            # Not "revoked": the agent works, with the token it was given since (until
            # 2026-11-30 this said "agent 'x' is revoked", sending people looking for nothing).
            raise AgentRevoked(
                f"agent {name!r} was given a new token after this connection was opened, so "
                "the token it was opened with no longer works: connect again with the new one",
                data={"agent": name, "token_replaced": True},
            )
        if status is not None:
            self.check_status(name, status)
        return status

    def status(self, name: str, token_hash: str | None = None) -> AgentStatus | None:
        """The agent's status; for a connection verified by the token `token_hash`, revoked when
        that is no longer the agent's token (revoked, then added again with a new one)."""
        row = self._row(self._store.read_db.conn(), name)
        if row is None:
            return None
        if token_hash is not None and row[0] != token_hash:
            return AgentStatus.REVOKED
        return AgentStatus(row[1])

    def seen(self, identity: Identity) -> None:
        """Record that an agent connected (registering a declared name on first sight). While
        the clock reads before 2026 (`core.clock.FLOOR_MS`) the time it was last seen is kept."""
        now = self._clock.now_ms()
        seen = None if before_floor(now) else now

        def job(tx: WriteTx) -> None:
            tx.conn.execute(
                "INSERT INTO agent (name, status, created_at, created_by, last_seen_at) "
                "VALUES (?, 'active', ?, 'self-declared', ?) "
                "ON CONFLICT(name) DO UPDATE SET "
                "last_seen_at = coalesce(excluded.last_seen_at, last_seen_at)",
                (identity.name, now, seen),
            )

        self._store.writer.run(job)
