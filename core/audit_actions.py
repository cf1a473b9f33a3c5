"""Which audited actions reach agents, count as writes, are refused on a wrong clock, and which
change-feed topics each touches."""

from __future__ import annotations

from core.changes import Topic
from core.clock import refuse_before_floor
from core.model import Caller, Surface

# What a revision of a memory records as its `action` (and its audit event as the change's).
REVISION_ACTIONS = (
    "write",
    "update",
    "upsert",
    "pin",
    "unpin",
    "archive",
    "unarchive",
    "supersede",
    "unsupersede",
    "rebind",
    "expire",
    "forget",
)

# The one rule for what an agent's change feed holds, pushed (`subscriptions.visible_change`) and
# read back (`changes.since`): these memory actions, on memories in its horizon. Every other
# action - the review queue's, policy, scanner, raw reads, identity, workspaces, agents, rotation -
# is for people only (docs/protocol.md). An allow-list, so a new action stays people-only until
# it is added here. (Until 2026-11-30 `changes.since` gave agents any event naming a memory in
# their horizon - a person's `read_raw`, an `adopt`.)
AGENT_ACTIONS: frozenset[str] = frozenset(
    {*REVISION_ACTIONS, "purge", "feedback", "contradict", "resolve", "import"}
)


def agent_may_see(action: str) -> bool:
    """Whether an event of this action may reach an agent at all (its horizon decides the rest)."""
    return action in AGENT_ACTIONS


# The events of a write served (a `write=True` method of core/protocol.py), which health's
# `last_write` reads back after a restart: the memory actions, the review queue's decisions and
# proposals, policy, identity and workspace changes - by an agent, a person or an import.
WRITE_ACTIONS: frozenset[str] = AGENT_ACTIONS | {
    "propose",
    "reobserve",
    "adopt",
    "reject",
    "policy_changed",
    "identity_version",
    "workspace_moved",
    "workspace_merged",
}
WRITE_SURFACES: frozenset[str] = frozenset(
    {Surface.AGENT.value, Surface.HUMAN.value, Surface.IMPORT.value}
)

# The events of writes an agent or a person asks for (the notes folder's and imports included)
# that are refused while the clock reads before 2026 (`core.clock.FLOOR_MS`): every such write
# records one of these in its own transaction, so this is the one place they are all checked.
# Not `policy_changed` - the policy file, the truth, is written before its event, so a person's
# change is refused before the file is touched (core/policy_file.py), and a file edited by hand
# is Cairn's `system` event - nor what keeps access working: agents' tokens and statuses, a
# person's raw read.
CLOCK_CHECKED: frozenset[str] = WRITE_ACTIONS - {"policy_changed"}


def refuse_wrong_clock(caller: Caller, action: str, at: int) -> None:
    """Refuse an agent's or a person's write stamped `at` before the clock can be trusted.
    Cairn's own housekeeping (`Surface.SYSTEM`) is not refused: it must open and serve.

    Raises:
        ClockWrong: what the clock reads, that nothing was stored and what to do.
    """
    if caller.surface is not Surface.SYSTEM and action in CLOCK_CHECKED:
        refuse_before_floor(at)


_MEMORY_TOPICS = frozenset({Topic.MEMORIES, Topic.HEALTH})
_AGENT_TOPICS = frozenset({Topic.AGENTS, Topic.HEALTH})
_REVIEW_TOPICS = frozenset({Topic.REVIEW, Topic.HEALTH})
_ACTION_TOPICS: dict[str, frozenset[Topic]] = {
    "audit_rotated": frozenset({Topic.HEALTH}),
    "propose": _REVIEW_TOPICS,
    "reobserve": _REVIEW_TOPICS,
    "reject": _REVIEW_TOPICS,
    "review_evicted": _REVIEW_TOPICS,
    "adopt": frozenset({Topic.MEMORIES, Topic.REVIEW, Topic.HEALTH}),
    "policy_changed": frozenset({Topic.POLICY, Topic.HEALTH}),
    "scan_allow": frozenset({Topic.MEMORIES, Topic.HEALTH}),
    "scan_unallow": frozenset({Topic.MEMORIES, Topic.HEALTH}),
    "read_raw": frozenset({Topic.HEALTH}),
    "identity_version": frozenset({Topic.IDENTITY, Topic.HEALTH}),
    "workspace_moved": frozenset({Topic.WORKSPACES, Topic.HEALTH}),
    "workspace_merged": frozenset({Topic.WORKSPACES, Topic.MEMORIES, Topic.HEALTH}),
    "agent_add": _AGENT_TOPICS,
    "agent_active": _AGENT_TOPICS,
    "agent_paused": _AGENT_TOPICS,
    "agent_revoked": _AGENT_TOPICS,
    # an old name ending in a line break, renamed (core/old_names.py): an agent, its identity
    # document and policy section, or a kind
    "name_renamed": frozenset(
        {Topic.AGENTS, Topic.IDENTITY, Topic.MEMORIES, Topic.POLICY, Topic.HEALTH}
    ),
}


def topics_for(action: str) -> frozenset[Topic]:
    """Which topics an audited action touches (the change feed rebuilt from the audit table)."""
    return _ACTION_TOPICS.get(action, _MEMORY_TOPICS)
