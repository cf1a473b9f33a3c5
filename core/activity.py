"""What happened since this Cairn started: connections, refusals, requests per agent. Counters
only - never memory content, never query text. Health reads them; they reset on restart.

A refusal or a search changes nothing in the store, so no commit announces it: the counters
announce themselves on the change bus (topic HEALTH, no changes), throttled, so a window showing
them stays current without polling."""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from core.changes import ChangeBus, ChangeSet, Topic

# At most one announcement per interval however busy the agents are; the last one always follows.
PUBLISH_INTERVAL_S = 0.5
THROTTLE_THREAD = "cairn-activity"
COUNTERS_MOVED = ChangeSet(changes=(), topics=frozenset({Topic.HEALTH}))


@dataclass
class AgentActivity:
    requests: int = 0
    writes: int = 0
    refusals: int = 0
    last_seen_ms: int | None = None
    verified: bool = False
    last_write_ms: int | None = None
    last_search_ms: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "writes": self.writes,
            "refusals": self.refusals,
            "last_seen": self.last_seen_ms,
            "verified": self.verified,
        }


class Throttle:
    """Calls `fire` on a timer thread soon after `poke`: at most once per `interval_s`, and always
    once after the last poke (a trailing call), so the last count is never missed. Thread-safe."""

    def __init__(self, fire: Callable[[], None], interval_s: float) -> None:
        self._fire = fire
        self._interval_s = interval_s
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._last = -math.inf  # time.monotonic() of the last call to `fire`
        self._closed = False

    def poke(self) -> None:
        with self._lock:
            if self._closed or self._timer is not None:
                return  # the call already scheduled runs after this poke: it covers it
            delay = max(0.0, self._last + self._interval_s - time.monotonic())
            self._timer = threading.Timer(delay, self._run)
            self._timer.name = THROTTLE_THREAD
            self._timer.daemon = True
            self._timer.start()

    def _run(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._timer = None  # a poke from now on schedules the next call
            self._last = time.monotonic()
        self._fire()

    def close(self) -> None:
        """Cancel a scheduled call; later pokes do nothing."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()


@dataclass
class Activity:
    """The counters. With a `bus`, every change to them is announced (see the module doc)."""

    connections_now: int = 0
    connections_total: int = 0
    refused_peer_uid: int = 0
    refused_too_many: int = 0
    refused_hello: int = 0
    bad_frames: int = 0
    push_overflows: int = 0  # subscribers unsubscribed for leaving too many pushes unread
    stalled_readers: int = 0  # connections cut for reading none of their answers in time
    last_write_ms: int | None = None
    last_search_ms: int | None = None
    refusals: Counter[str] = field(default_factory=Counter)
    held: Counter[str] = field(default_factory=Counter)  # writes sent to review, by reason
    agents: dict[str, AgentActivity] = field(default_factory=dict)
    bus: ChangeBus | None = field(default=None, repr=False, compare=False)
    interval_s: float = field(default=PUBLISH_INTERVAL_S, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _throttle: Throttle | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bus = self.bus
        if bus is not None:
            self._throttle = Throttle(lambda: bus.publish(COUNTERS_MOVED), self.interval_s)

    def close(self) -> None:
        """Stop announcing (a pending announcement is dropped)."""
        if self._throttle is not None:
            self._throttle.close()

    def _moved(self) -> None:
        if self._throttle is not None:
            self._throttle.poke()

    def connected(self) -> None:
        with self._lock:
            self.connections_now += 1
            self.connections_total += 1
        self._moved()

    def disconnected(self) -> None:
        with self._lock:
            self.connections_now -= 1
        self._moved()

    def count(self, name: str, amount: int = 1) -> None:
        """Bump one of the plain counters (`refused_peer_uid`, `bad_frames`, ...)."""
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)
        self._moved()

    def request(
        self, agent: str | None, *, verified: bool, at_ms: int, write: bool, search: bool
    ) -> None:
        with self._lock:
            if write:
                self.last_write_ms = at_ms
            if search:
                self.last_search_ms = at_ms
            if agent is not None:
                entry = self.agents.setdefault(agent, AgentActivity())
                entry.requests += 1
                entry.writes += write
                entry.last_seen_ms = at_ms
                entry.verified = verified
                if write:
                    entry.last_write_ms = at_ms
                if search:
                    entry.last_search_ms = at_ms
        self._moved()

    def hold(self, reason: str) -> None:
        """A write that now waits for review (policy, scanner, not_owner, mass_forget, similar,
        identity)."""
        with self._lock:
            self.held[reason] += 1
        self._moved()

    def refusal(self, agent: str | None, reason: str, *, verified: bool | None = None) -> None:
        """A refused request or write, counted under `agent` when it is known whose it is;
        `verified` says whether a token proved it (a refused hello's: nothing else does)."""
        with self._lock:
            self.refusals[reason] += 1
            if agent is not None:
                entry = self.agents.setdefault(agent, AgentActivity())
                entry.refusals += 1
                if verified is not None:
                    entry.verified = verified
        self._moved()
