"""Requests as typed values, and their parsing from untrusted JSON-like parameters.

Every adapter that receives parameters from outside (socket, CLI JSON lines, MCP) parses them here,
once, into these frozen values. Shape and type errors name the field; domain limits (sizes, kinds)
are checked by `core.validation` inside the service, where the settings are known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from core.errors import InvalidInput
from core.model import Origin, Scope
from core.validation import normalize_breaks

# Fields the service stamps from who is calling. A caller that sends one gets a clear error.
STAMP_FIELDS = frozenset(
    {
        "author_tier",
        "tier",
        "agent",
        "agent_id",
        "verified",
        "workspace_id",
        "session_id",
        "created_at",
        "updated_at",
        "revision",
        "seq",
        "status",
        "use_count",
        "last_recalled_at",
        "flags",
        "content_hash",
        "superseded_by",
    }
)

_MAX_KEY_CHARS = 200


@dataclass(frozen=True)
class WriteRequest:
    content: str
    kind: str
    scope: Scope
    tags: tuple[str, ...] = ()
    importance: int = 3
    summary: str | None = None
    keywords: str | None = None
    idempotency_key: str | None = None
    dedupe_key: str | None = None
    ttl_seconds: int | None = None
    origin: Origin = Origin.EXPLICIT
    source: str | None = None
    pinned: bool = False

    FIELDS = frozenset(
        {
            "content",
            "kind",
            "scope",
            "tags",
            "importance",
            "summary",
            "keywords",
            "idempotency_key",
            "dedupe_key",
            "ttl_seconds",
            "origin",
            "source",
            "pinned",
        }
    )

    @staticmethod
    def from_params(params: Mapping[str, Any]) -> WriteRequest:
        """Parse `memory.write` parameters. Raises InvalidInput naming the offending field."""
        check_fields(params, WriteRequest.FIELDS, required=("content", "kind", "scope"))
        return WriteRequest(
            content=text(params, "content"),
            kind=text(params, "kind"),
            scope=scope(params["scope"]),
            tags=strings(params.get("tags")),
            importance=integer(params, "importance", default=3),
            summary=opt_text(params, "summary"),
            keywords=opt_text(params, "keywords"),
            idempotency_key=key(params, "idempotency_key"),
            dedupe_key=key(params, "dedupe_key"),
            ttl_seconds=opt_integer(params, "ttl_seconds"),
            origin=origin(params.get("origin")),
            source=opt_text(params, "source"),
            pinned=flag(params, "pinned", default=False),
        )

    def fingerprint(self) -> dict[str, Any]:
        """The request's meaning, for idempotency comparison (the key itself excluded)."""
        return {
            "content": self.content,
            "kind": self.kind,
            "scope": self.scope.value,
            "tags": list(self.tags),
            "importance": self.importance,
            "summary": self.summary,
            "keywords": self.keywords,
            "dedupe_key": self.dedupe_key,
            "ttl_seconds": self.ttl_seconds,
            "origin": self.origin.value,
            "source": self.source,
            "pinned": self.pinned,
        }


_UNSET: Any = object()


@dataclass(frozen=True)
class UpdateRequest:
    """A change to an existing memory. Fields left as None are unchanged (`summary=""` clears)."""

    id: str
    if_revision: int
    content: str | None = None
    summary: str | None = None
    kind: str | None = None
    scope: Scope | None = None
    tags: tuple[str, ...] | None = None
    keywords: str | None = None
    importance: int | None = None
    pinned: bool | None = None
    ttl_seconds: int | None = None
    clear_expiry: bool = False
    reason: str | None = None
    # Set by Cairn's own adapters only (the notes folder follows a renamed file); never read
    # from the wire, so it is not in FIELDS.
    source: str | None = None

    FIELDS = frozenset(
        {
            "id",
            "if_revision",
            "content",
            "summary",
            "kind",
            "scope",
            "tags",
            "keywords",
            "importance",
            "pinned",
            "ttl_seconds",
            "clear_expiry",
            "reason",
        }
    )

    @staticmethod
    def from_params(params: Mapping[str, Any]) -> UpdateRequest:
        check_fields(params, UpdateRequest.FIELDS, required=("id", "if_revision"))
        if params.get("ttl_seconds") is not None and params.get("clear_expiry"):
            raise InvalidInput(
                "give ttl_seconds (a new expiry) or clear_expiry (none), not both",
                data={"field": "clear_expiry"},
            )
        raw_scope = params.get("scope")
        raw_tags = params.get("tags", _UNSET)
        return UpdateRequest(
            id=text(params, "id"),
            if_revision=revision(params, "if_revision"),
            content=opt_text(params, "content"),
            summary=opt_text(params, "summary", allow_empty=True),
            kind=opt_text(params, "kind"),
            scope=scope(raw_scope) if raw_scope is not None else None,
            tags=None if raw_tags is _UNSET or raw_tags is None else strings(raw_tags),
            keywords=opt_text(params, "keywords", allow_empty=True),
            importance=opt_integer(params, "importance"),
            pinned=opt_flag(params, "pinned"),
            ttl_seconds=opt_integer(params, "ttl_seconds"),
            clear_expiry=flag(params, "clear_expiry", default=False),
            reason=opt_text(params, "reason"),
        )

    def changes_anything(self) -> bool:
        return (
            any(
                v is not None
                for v in (
                    self.content,
                    self.summary,
                    self.kind,
                    self.scope,
                    self.tags,
                    self.keywords,
                    self.importance,
                    self.pinned,
                    self.source,
                    self.ttl_seconds,
                )
            )
            or self.clear_expiry
        )


# -- field parsers ---------------------------------------------------------------------------


def check_fields(
    params: Mapping[str, Any],
    allowed: frozenset[str],
    *,
    required: tuple[str, ...],
) -> None:
    """Refuse unknown fields by name; a field Cairn stamps from the caller gets its own message."""
    if not isinstance(params, Mapping):
        raise InvalidInput("parameters must be an object")
    for name in params:
        if not isinstance(name, str):
            raise InvalidInput("parameter names must be strings")
        if name in allowed:
            continue
        if name in STAMP_FIELDS:
            raise InvalidInput(
                f"field '{name}' is set by Cairn from the connection and cannot be supplied",
                data={"field": name},
            )
        raise InvalidInput(
            f"unknown field '{name}' (allowed: {', '.join(sorted(allowed))})",
            data={"field": name},
        )
    for name in required:
        if params.get(name) is None:
            raise InvalidInput(f"field '{name}' is required", data={"field": name})


def text(params: Mapping[str, Any], name: str) -> str:
    """The string field `name`, its line breaks as line feeds (`normalize_breaks`: a reason or a
    note is stored as it arrives, and the service refuses a carriage return in one)."""
    value = params.get(name)
    if not isinstance(value, str):
        raise InvalidInput(
            f"field '{name}' must be a string, got {type_name(value)}", data={"field": name}
        )
    return normalize_breaks(value)


def opt_text(params: Mapping[str, Any], name: str, *, allow_empty: bool = False) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(
            f"field '{name}' must be a string, got {type_name(value)}", data={"field": name}
        )
    if not allow_empty and not value.strip():
        raise InvalidInput(f"field '{name}' must not be empty", data={"field": name})
    return normalize_breaks(value)


def key(params: Mapping[str, Any], name: str) -> str | None:
    value = opt_text(params, name)
    if value is not None and len(value) > _MAX_KEY_CHARS:
        raise InvalidInput(
            f"field '{name}' is longer than {_MAX_KEY_CHARS} characters", data={"field": name}
        )
    return value


def integer(params: Mapping[str, Any], name: str, *, default: int | None = None) -> int:
    value = params.get(name)
    if value is None:
        if default is None:
            raise InvalidInput(f"field '{name}' is required", data={"field": name})
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(
            f"field '{name}' must be an integer, got {type_name(value)}", data={"field": name}
        )
    if not -(2**63) <= value < 2**63:  # what SQLite stores; past it an integer means nothing here
        raise InvalidInput(f"field '{name}' is out of range", data={"field": name})
    return value


def revision(params: Mapping[str, Any], name: str) -> int:
    """A revision number: revisions start at 1, so -1 or 0 is a mistake, not a stale read (until
    2026-11-30 it answered conflict, "at revision 1, not -1")."""
    value = integer(params, name)
    if value < 1:
        raise InvalidInput(
            f"field '{name}' must be at least 1 (revisions start at 1), got {value}",
            data={"field": name},
        )
    return value


def opt_integer(params: Mapping[str, Any], name: str) -> int | None:
    if params.get(name) is None:
        return None
    return integer(params, name)


def flag(params: Mapping[str, Any], name: str, *, default: bool) -> bool:
    value = params.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidInput(
            f"field '{name}' must be true or false, got {type_name(value)}", data={"field": name}
        )
    return value


def opt_flag(params: Mapping[str, Any], name: str) -> bool | None:
    if params.get(name) is None:
        return None
    return flag(params, name, default=False)


def strings(value: Any, name: str = "tags") -> tuple[str, ...]:
    """A list of strings (absent: empty).

    Raises:
        InvalidInput: not a list, or an element that is not a string (named by its index:
            "tags[1] must be a string, got null").
    """
    if value is None:
        return ()
    if not isinstance(value, list | tuple):
        raise InvalidInput(
            f"field '{name}' must be a list of strings, got {type_name(value)}",
            data={"field": name},
        )
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise InvalidInput(
                f"{name}[{index}] must be a string, got {type_name(item)}",
                data={"field": name, "index": index},
            )
    return tuple(value)


E = TypeVar("E", bound=Enum)


def choice(value: Any, name: str, enum: type[E]) -> E:
    """One value of an enumeration, with the allowed values in the error."""
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(str(m.value) for m in enum)
        raise InvalidInput(
            f"field '{name}' must be one of {allowed}, got {value!r}", data={"field": name}
        ) from None


def choices(value: Any, name: str, enum: type[E]) -> frozenset[E]:
    """A list of values of an enumeration (absent: empty)."""
    return frozenset(choice(v, name, enum) for v in strings(value, name))


def scope(value: Any) -> Scope:
    try:
        return Scope(value)
    except ValueError:
        raise InvalidInput(
            f"unknown scope {value!r} (expected one of: {', '.join(s.value for s in Scope)})",
            data={"field": "scope"},
        ) from None


def origin(value: Any) -> Origin:
    if value is None:
        return Origin.EXPLICIT
    try:
        return Origin(value)
    except ValueError:
        raise InvalidInput(
            f"unknown origin {value!r} (expected 'explicit' - you were asked to remember this - "
            "or 'extracted' - a model picked it out on its own)",
            data={"field": "origin"},
        ) from None


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)
