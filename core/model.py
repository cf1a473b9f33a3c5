"""The memory record and the values around it: kinds, scopes, statuses, tiers, pages, results."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Scope(StrEnum):
    """Who a memory is for. `project` binds to a workspace, `session` to one session id."""

    GLOBAL = "global"
    USER = "user"
    PROJECT = "project"
    SESSION = "session"


class Status(StrEnum):
    """Where a memory is in its life. Expiry is not a status: it is a time, checked on read."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    FORGOTTEN = "forgotten"


class Tier(StrEnum):
    """How much a memory's words can be trusted, decided by `core.tiers` and nothing else."""

    HUMAN = "human"
    EXPLICIT = "explicit"
    DERIVED = "derived"
    LLM = "llm"


class Surface(StrEnum):
    """Where a request comes from. Stamped by the adapter that received it, never by the caller."""

    AGENT = "agent"  # an agent connection (socket, MCP bridge)
    HUMAN = "human"  # the windows, or the CLI's human commands
    NOTES = "notes"  # the watched notes folder
    IMPORT = "import"  # an import of an archive or a JSON-lines file
    SYSTEM = "system"  # Cairn itself: the janitor, migrations


# Names Cairn records for who acted where only a name is kept (a tombstone's `forgotten_by`, a
# decision's `by`): an agent called one of them would pass for a person or for Cairn itself.
RESERVED_AGENT_NAMES = frozenset({s.value for s in Surface} | {"cairn"})

# Every reason code a waiting proposal can carry (`suggestions.Reason.code`), for the filters
# that ask for one (here, not in core.suggestions, so the command line needs no engine for them).
REASON_CODES = ("policy", "scanner", "not_owner", "mass_forget", "similar", "feedback", "identity")


class Origin(StrEnum):
    """What an agent declares about a write: it was asked to remember, or a model extracted it."""

    EXPLICIT = "explicit"
    EXTRACTED = "extracted"


BUILTIN_KINDS: tuple[str, ...] = (
    "fact",
    "preference",
    "convention",
    "procedure",
    "pitfall",
    "correction",
    "insight",
    "idea",
)

# Statuses a plain list shows; superseded and forgotten memories appear only when asked for.
DEFAULT_LIST_STATUSES: frozenset[Status] = frozenset({Status.ACTIVE, Status.ARCHIVED})


@dataclass(frozen=True)
class Caller:
    """Who is asking, as established by the adapter (a connection's `hello`, the windows, the CLI).

    The service stamps memories from this value; callers cannot set any of it through parameters.
    """

    surface: Surface
    agent: str | None = None
    verified: bool = False
    workspace_id: str | None = None
    session_id: str | None = None
    # Verified by a token the agent issued itself (`hello {enroll: true}`), not one a person
    # issued with `cairn agent add`.
    self_enrolled: bool = False
    # The folder a hello named whose registration as a workspace failed (a full disk, a
    # read-only database): the connection has no workspace id, sees no project or session
    # memories, and its project and session writes are refused (`core.memory_writes.binding`).
    unregistered_folder: str | None = None

    @property
    def registered(self) -> bool:
        """Verified with a token a person issued: what a looser per-agent override in the
        capture policy needs. A self-enrolled token tells the agent apart, but nobody vouched
        for it - it unlocks nothing a same-user program connecting unverified could not do."""
        return self.verified and not self.self_enrolled

    @property
    def is_human(self) -> bool:
        return self.surface in (Surface.HUMAN, Surface.NOTES, Surface.IMPORT, Surface.SYSTEM)

    @property
    def actor(self) -> str:
        """The name recorded in audit events."""
        if self.surface is Surface.AGENT:
            return self.agent or "unknown-agent"
        return self.surface.value

    @staticmethod
    def human() -> Caller:
        return Caller(Surface.HUMAN)

    @staticmethod
    def system() -> Caller:
        return Caller(Surface.SYSTEM)


@dataclass(frozen=True)
class Workspace:
    id: str
    path: str
    created_at: int
    path_exists: bool = True


@dataclass(frozen=True)
class Memory:
    """One memory as it stands now (its latest revision, plus usage and lifecycle state)."""

    id: str
    revision: int
    content: str
    summary: str | None
    kind: str
    scope: Scope
    workspace_id: str | None
    session_id: str | None
    tags: tuple[str, ...]
    keywords: str | None
    importance: int
    pinned: bool
    status: Status
    tier: Tier
    agent: str | None
    source: str | None
    origin: Origin | None
    created_at: int
    updated_at: int
    expires_at: int | None
    dedupe_key: str | None
    superseded_by: str | None
    use_count: int = 0
    last_recalled_at: int | None = None
    flags: tuple[str, ...] = ()
    expired: bool = False
    seq: int = 0  # creation order in this store (0 until stored); list cursors and the index use it

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "revision": self.revision,
            "content": self.content,
            "summary": self.summary,
            "kind": self.kind,
            "scope": self.scope.value,
            "workspace_id": self.workspace_id,
            "session_id": self.session_id,
            "tags": list(self.tags),
            "keywords": self.keywords,
            "importance": self.importance,
            "pinned": self.pinned,
            "status": self.status.value,
            "author_tier": self.tier.value,
            "agent": self.agent,
            "source": self.source,
            "origin": self.origin.value if self.origin else None,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "expires_at": self.expires_at,
            "expired": self.expired,
            "dedupe_key": self.dedupe_key,
            "superseded_by": self.superseded_by,
            "use_count": self.use_count,
            "last_recalled_at": self.last_recalled_at,
            "flags": list(self.flags),
        }


@dataclass(frozen=True)
class Revision:
    """One immutable revision of a memory: its fields as they were, who made it, and why."""

    memory_id: str
    revision: int
    content: str
    summary: str | None
    kind: str
    scope: Scope
    workspace_id: str | None
    session_id: str | None
    tags: tuple[str, ...]
    keywords: str | None
    importance: int
    pinned: bool
    status: Status
    tier: Tier
    expires_at: int | None
    actor: str
    action: str
    reason: str | None
    created_at: int

    def to_dict(self) -> dict[str, object]:
        return {
            "memory_id": self.memory_id,
            "revision": self.revision,
            "content": self.content,
            "summary": self.summary,
            "kind": self.kind,
            "scope": self.scope.value,
            "workspace_id": self.workspace_id,
            "session_id": self.session_id,
            "tags": list(self.tags),
            "keywords": self.keywords,
            "importance": self.importance,
            "pinned": self.pinned,
            "status": self.status.value,
            "author_tier": self.tier.value,
            "expires_at": self.expires_at,
            "actor": self.actor,
            "action": self.action,
            "reason": self.reason,
            "created_at": self.created_at,
        }


class RelationKind(StrEnum):
    SUPERSEDES = "supersedes"
    CONTRADICTS = "contradicts"


@dataclass(frozen=True)
class Relation:
    """`from_id` supersedes or contradicts `to_id`. A contradiction stays open until resolved."""

    id: int
    kind: RelationKind
    from_id: str
    to_id: str
    open: bool
    created_at: int
    created_by: str
    note: str | None = None
    resolved_at: int | None = None
    resolved_by: str | None = None
    resolution: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "from_id": self.from_id,
            "to_id": self.to_id,
            "open": self.open,
            "created_at": self.created_at,
            "created_by": self.created_by,
            "note": self.note,
            "resolved_at": self.resolved_at,
            "resolved_by": self.resolved_by,
            "resolution": self.resolution,
        }


@dataclass(frozen=True)
class Tombstone:
    """What remains of a forgotten or purged memory: enough to refuse it coming back."""

    memory_id: str
    content_hash: str
    forgotten_by: str
    forgotten_at: int
    reason: str | None


@dataclass(frozen=True)
class MemoryDetail:
    """A memory with its history and relations, as `get(..., history=True)` returns it."""

    memory: Memory
    revisions: tuple[Revision, ...] = ()
    relations: tuple[Relation, ...] = ()


@dataclass(frozen=True)
class Page:
    items: tuple[Memory, ...]
    next_cursor: str | None


class WriteStatus(StrEnum):
    STORED = "stored"
    PENDING = "pending"
    REFUSED = "refused"


@dataclass(frozen=True)
class WriteResult:
    """What happened to a write or an update. Agents always learn which of the three it was."""

    status: WriteStatus
    id: str | None = None
    revision: int | None = None
    memory: Memory | None = None
    suggestion_id: str | None = None
    reason: str | None = None
    reason_code: str | None = None
    duplicate: bool = False
    similar: tuple[str, ...] = ()
    replayed: bool = False
    # A replay has no memory to look at: whether the first answer said `archived` (the memory
    # was archived then, whatever it is now).
    archived: bool = False

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"status": self.status.value}
        if self.id is not None:
            out["id"] = self.id
        if self.revision is not None:
            out["revision"] = self.revision
        if self.suggestion_id is not None:
            out["suggestion_id"] = self.suggestion_id
        if self.reason is not None:
            out["reason"] = self.reason
        if self.reason_code is not None:
            out["reason_code"] = self.reason_code
        if self.duplicate:
            out["duplicate"] = True
        memory = self.memory
        if self.archived or (memory is not None and memory.status is Status.ARCHIVED):
            # Stored (a duplicate, or a revision that kept it archived), but not live.
            out["archived"] = True
        if self.similar:
            out["similar"] = list(self.similar)
        if self.replayed:
            out["replayed"] = True
        return out

    @staticmethod
    def stored(memory: Memory, *, duplicate: bool = False) -> WriteResult:
        return WriteResult(
            WriteStatus.STORED, memory.id, memory.revision, memory, duplicate=duplicate
        )


@dataclass(frozen=True)
class ListFilter:
    """Filters for `list`. Empty fields match everything; statuses default to active + archived."""

    scopes: frozenset[Scope] = frozenset()
    workspace_ids: frozenset[str] = frozenset()
    kinds: frozenset[str] = frozenset()
    statuses: frozenset[Status] = DEFAULT_LIST_STATUSES
    tiers: frozenset[Tier] = frozenset()
    agents: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    include_expired: bool = False
