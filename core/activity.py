"""What happened since this Cairn started: connections, refusals, requests per agent. Counters
only - never memory content, never query text. Health reads them; they reset on restart."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class AgentActivity:
    requests: int = 0
    writes: int = 0
    refusals: int = 0
    last_seen_ms: int | None = None
    verified: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "writes": self.writes,
            "refusals": self.refusals,
            "last_seen": self.last_seen_ms,
            "verified": self.verified,
        }


@dataclass
class Activity:
    connections_now: int = 0
    connections_total: int = 0
    refused_peer_uid: int = 0
    refused_too_many: int = 0
    refused_hello: int = 0
    bad_frames: int = 0
    last_write_ms: int | None = None
    last_search_ms: int | None = None
    refusals: Counter[str] = field(default_factory=Counter)
    held: Counter[str] = field(default_factory=Counter)  # writes sent to review, by reason
    agents: dict[str, AgentActivity] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def connected(self) -> None:
        with self._lock:
            self.connections_now += 1
            self.connections_total += 1

    def disconnected(self) -> None:
        with self._lock:
            self.connections_now -= 1

    def count(self, name: str, amount: int = 1) -> None:
        """Bump one of the plain counters (`refused_peer_uid`, `bad_frames`, ...)."""
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def request(
        self, agent: str | None, *, verified: bool, at_ms: int, write: bool, search: bool
    ) -> None:
        with self._lock:
            if write:
                self.last_write_ms = at_ms
            if search:
                self.last_search_ms = at_ms
            if agent is None:
                return
            entry = self.agents.setdefault(agent, AgentActivity())
            entry.requests += 1
            entry.writes += write
            entry.last_seen_ms = at_ms
            entry.verified = verified

    def hold(self, reason: str) -> None:
        """A write that now waits for review (policy, scanner, not_owner, similar, identity)."""
        with self._lock:
            self.held[reason] += 1

    def refusal(self, agent: str | None, reason: str) -> None:
        with self._lock:
            self.refusals[reason] += 1
            if agent is not None:
                self.agents.setdefault(agent, AgentActivity()).refusals += 1
