"""The shapes of an archive's records, exactly: each line of a record file is checked field by
field before anything is imported, and read back into these frozen records. Also the column order
of the exporter's tombstone and identity queries (`core/archive_export.py`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.agents import NAME as AGENT_NAME
from core.audit_actions import REVISION_ACTIONS
from core.errors import CairnError, InvalidInput
from core.knob import KIND_WORD
from core.model import (
    RESERVED_AGENT_NAMES,
    Memory,
    Origin,
    Relation,
    RelationKind,
    Revision,
    Scope,
    Status,
    Surface,
    Tier,
)
from core.old_names import as_now, old_shape
from core.ownership import ADOPTED_FLAG
from core.scanner import MAX_RULE_CHARS, RULE_NAME, RULES, secret_rule
from core.validation import (
    EVER_REFUSED,
    MAX_SESSION_CHARS,
    Limits,
    check_kind,
    check_tags,
    check_text,
    normalize_breaks,
    utf8_size,
)
from core.workspace import WORKSPACE_ID

_Check = Callable[[Any], bool]
_MEMORY_ID = re.compile(r"m_[0-9a-f]{28}")
# No text is longer than this (a line of an archive is at most 64 MiB): the rules of the text
# itself, without this store's limits, which hold for the current state only.
_ANY_SIZE = 1 << 30
_TEXTS = ("content", "summary", "keywords", "source")  # a memory's and a revision's
SHA256 = re.compile(r"[0-9a-f]{64}")


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def lone_surrogate(v: Any) -> bool:
    """Whether `v` (a JSON value) holds text UTF-8 cannot carry: a lone surrogate, which JSON
    can spell (`"\\ud800"`) and no store can hold."""
    if isinstance(v, str):
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(v, dict):
        return any(lone_surrogate(k) or lone_surrogate(x) for k, x in v.items())
    if isinstance(v, list):
        return any(lone_surrogate(x) for x in v)
    return False


def _is_str(v: Any) -> bool:
    return isinstance(v, str) and not lone_surrogate(v)


def _is_text(v: Any) -> bool:
    return _is_str(v) and bool(v)


def _is_id(v: Any) -> bool:
    return isinstance(v, str) and _MEMORY_ID.fullmatch(v) is not None


def _is_strings(v: Any) -> bool:
    return isinstance(v, list) and all(_is_str(x) for x in v)


def _optional(check: _Check) -> _Check:
    return lambda v: v is None or check(v)


def _one_of(*values: str) -> _Check:
    return lambda v: isinstance(v, str) and v in values


def _between(low: int, high: int) -> _Check:
    return lambda v: is_int(v) and low <= v <= high


@dataclass(frozen=True)
class _Shape:
    """A check of an identifier or a mark, with the words saying the shape it wants. A value
    that fails it is not shown in the refusal: it may be an escape sequence or a secret."""

    check: _Check
    rule: str

    def __call__(self, v: Any) -> bool:
        return self.check(v)

    def optional(self) -> _Shape:
        return _Shape(lambda v: v is None or self.check(v), self.rule)


# A session id as an agent's hello gives it (`validation.MAX_SESSION_CHARS`). Hello refuses a
# control character in one since 2026-11-30, and a store from before may hold one: that is
# checked at import (`archive_refusals`, `SESSION_CONTROL`), keeping out only what holds it.
_SESSION = _Shape(
    lambda v: _is_text(v) and len(v) <= MAX_SESSION_CHARS,
    f"a session id is at most {MAX_SESSION_CHARS} characters, as an agent's hello gives it",
)
_WORKSPACE = _Shape(
    lambda v: isinstance(v, str) and WORKSPACE_ID.fullmatch(v) is not None,
    "a workspace id is ws_ and 16 lower-case hex digits, as Cairn makes it",
)
# The marks Cairn keeps on a memory (docs/data-model.md): `adopted`, `scan:<rule>` for each
# scanner finding when it was stored - and `redacted`, which reads add. Until 2026-11-30 an
# archive could bring any text here, and agents were handed it. A newer Cairn's scanner may have
# a rule this one lacks: a `scan:` mark comes in when its rule has a rule name's shape (and holds
# no secret, `parse_memory`).
FLAGS = frozenset({ADOPTED_FLAG, "redacted", *(f"scan:{rule}" for rule in RULES)})


def _is_mark(v: Any) -> bool:
    if not isinstance(v, str):
        return False
    if v in FLAGS:
        return True
    rule = v.removeprefix("scan:")
    return rule != v and len(rule) <= MAX_RULE_CHARS and RULE_NAME.fullmatch(rule) is not None


_FLAGS = _Shape(
    lambda v: isinstance(v, list) and all(_is_mark(f) for f in v),
    "each is a mark Cairn keeps: adopted, redacted or scan: and a scanner rule's name",
)
# How a contradiction was closed: the side a person kept (`keep`: from, to or both), or the
# side that went (forgotten or purged: `Contradictions.close_contradictions`).
RESOLUTIONS = ("from", "to", "both", "forgotten", "purged")
_RESOLUTION = _Shape(
    lambda v: v in RESOLUTIONS,
    f"how a contradiction was resolved: one of {', '.join(RESOLUTIONS)}",
)


# Who acted, as a write records it (`Caller.actor`): an agent's name, or the name Cairn records
# for a person, the notes folder, an import or itself. Until 2026-11-30 an edited archive could
# bring any text here - an escape sequence `cairn get --history` then printed as it was, a line
# break, `human` as an agent's name.
OWN_ACTORS = (Surface.HUMAN, Surface.NOTES, Surface.IMPORT, Surface.SYSTEM)


def _is_agent(v: Any) -> bool:
    """An agent's name as every door takes it - or one an old Cairn let end in line breaks, or
    one it let an agent take that Cairn keeps for itself (`human`, `cairn`: until 2026-11-30),
    which the import renames (`core/old_names.py`, `archive_renames.rename_old_names`)."""
    if not isinstance(v, str):
        return False
    if old_shape(v) or v in RESERVED_AGENT_NAMES:
        return True
    return AGENT_NAME.fullmatch(v) is not None


def _is_actor(v: Any) -> bool:
    return _is_agent(v) or v in OWN_ACTORS


_AGENT_RULE = (
    "agent names are 1-64 characters of lower-case letters, digits, '.', '_' or '-', starting "
    "with a letter or digit"
)


def _wrong_name(name: str, value: Any) -> str | None:
    """Why `value` cannot be field `name`'s when that field names who acted; None for another
    field."""
    if name not in _NAMES:
        return None
    shown = repr(value[:40]) + ("..." if len(value) > 40 else "") if isinstance(value, str) else ""
    if not shown:
        return None
    if name == "agent":
        why = f"{shown} is not an agent's name: {_AGENT_RULE}"
    else:
        actors = ", ".join(OWN_ACTORS)
        why = f"{shown} is neither an agent's name ({_AGENT_RULE}) nor one of {actors}"
    return f"has a wrong value in field {name!r} ({why})"


# What a revision of a kept memory may have done (docs/data-model.md): every action a write
# records but `forget`, whose memory is never in an archive (only its tombstone is).
KEPT_ACTIONS = tuple(a for a in REVISION_ACTIONS if a != "forget")
_POSITIVE = _between(1, 2**62)
# A time is milliseconds since 1970, up to the end of the year 9999: what a date can show, and
# far inside what SQLite's INTEGER holds (2**64 made the import crash half-way until 2026-11-30).
MAX_TIME = 253_402_300_799_999
_TIME = _between(0, MAX_TIME)
_TIMES = {
    "created_at",
    "updated_at",
    "expires_at",
    "last_recalled_at",
    "resolved_at",
    "forgotten_at",
}
_SCOPES = _one_of(*(s.value for s in Scope))
# Both a memory and each of its revisions hold these; the last revision repeats the memory's.
_SHARED: dict[str, _Check] = {
    "revision": _POSITIVE,
    "content": _is_text,
    "summary": _optional(_is_str),
    "kind": _is_text,
    "scope": _SCOPES,
    "workspace_id": _WORKSPACE.optional(),
    "session_id": _SESSION.optional(),
    "tags": _is_strings,
    "keywords": _optional(_is_str),
    "importance": _between(1, 5),
    "pinned": lambda v: isinstance(v, bool),
    # Forgotten memories are never in an archive: only their tombstones are.
    "status": _one_of(Status.ACTIVE, Status.SUPERSEDED, Status.ARCHIVED),
    "author_tier": _one_of(*(t.value for t in Tier)),
    "expires_at": _optional(_TIME),
    "created_at": _TIME,
}
MEMORY_SPEC: dict[str, _Check] = _SHARED | {
    "id": _is_id,
    "agent": _optional(_is_agent),
    "source": _optional(_is_str),
    "origin": _optional(_one_of(*(o.value for o in Origin))),
    "updated_at": _TIME,
    "dedupe_key": _optional(_is_str),
    "superseded_by": _optional(_is_id),
    "flags": _FLAGS,
    "use_count": _between(0, 2**62),
    "last_recalled_at": _optional(_TIME),
    "revisions": lambda v: isinstance(v, list) and bool(v),
    "relations": lambda v: isinstance(v, list),
}
REVISION_SPEC: dict[str, _Check] = _SHARED | {
    "actor": _is_actor,
    "action": _is_text,
    "reason": _optional(_is_str),
}
RELATION_SPEC: dict[str, _Check] = {
    "kind": _one_of(*(k.value for k in RelationKind)),
    "to_id": _is_id,
    "open": lambda v: isinstance(v, bool),
    "note": _optional(_is_str),
    "created_at": _TIME,
    "created_by": _is_actor,
    "resolved_at": _optional(_TIME),
    "resolved_by": _optional(_is_actor),
    "resolution": _RESOLUTION.optional(),
}
WORKSPACE_SPEC: dict[str, _Check] = {"id": _WORKSPACE, "path": _is_text, "created_at": _TIME}
TOMBSTONE_SPEC: dict[str, _Check] = {
    "memory_id": _is_id,
    "content_hash": lambda v: isinstance(v, str) and SHA256.fullmatch(v) is not None,
    "scope": _SCOPES,
    "workspace_id": _WORKSPACE.optional(),
    "session_id": _SESSION.optional(),
    "forgotten_by": _is_actor,
    "forgotten_at": _TIME,
    "reason": _optional(_is_str),
}
IDENTITY_SPEC: dict[str, _Check] = {
    "doc": _is_text,
    "version": _POSITIVE,
    "content": _is_str,
    "author_kind": _one_of("human", "agent", "system", "import"),
    "author": _is_actor,
    "reason": _optional(_is_str),
    "parent": _optional(_POSITIVE),
    "created_at": _TIME,
    "content_hash": lambda v: isinstance(v, str) and SHA256.fullmatch(v) is not None,
}
# The fields naming who acted (`_wrong_name` says what is wrong with one).
_NAMES = {"agent", "actor", "created_by", "resolved_by", "forgotten_by", "author"}
# Also the column order of `_TOMBSTONES` and `_IDENTITY`.
TOMBSTONE_FIELDS = tuple(TOMBSTONE_SPEC)
IDENTITY_FIELDS = tuple(IDENTITY_SPEC)


def breaks_as_now(record: dict[str, Any], *names: str) -> dict[str, Any]:
    """`record` with the text fields `names` holding line feeds for each CRLF, lone carriage
    return and NEL, as every write stores them since 2026-11-30 (a store from before may hold
    them: its archive comes in, the breaks as line feeds)."""
    return record | {
        name: normalize_breaks(record[name]) for name in names if isinstance(record.get(name), str)
    }


def invalid(where: str, what: str) -> InvalidInput:
    """The refusal of an archive, naming the file (and line) at fault."""
    return InvalidInput(
        f"the archive is not valid: {where} {what}; nothing was imported",
        data={"file": where.split(" ", maxsplit=1)[0]},
    )


def parse_json(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    # Deep nesting makes the parser raise RecursionError, not a decode error (FACTS.md).
    except (ValueError, RecursionError) as e:
        raise invalid(where, "is not valid JSON") from e


def checked(obj: Any, spec: Mapping[str, _Check], where: str) -> dict[str, Any]:
    """`obj` when it is a JSON object with exactly the fields of `spec`, each of the right type."""
    if not isinstance(obj, dict):
        raise invalid(where, "is not a JSON object")
    missing, extra = sorted(set(spec) - set(obj)), sorted(set(obj) - set(spec))
    if missing:
        raise invalid(where, f"lacks the field(s) {', '.join(missing)}")
    if extra:
        raise invalid(where, f"has unknown field(s) {', '.join(extra)}")
    for name, check in spec.items():
        value = obj[name]
        if check(value):
            continue
        if lone_surrogate(value):
            raise invalid(
                where, f"has text that is not valid UTF-8 (a lone surrogate) in field {name!r}"
            )
        if is_int(value) and name in _TIMES:
            raise invalid(
                where,
                f"has a time out of range in field {name!r} (milliseconds since 1970, up to the "
                "year 9999)",
            )
        wrong = _wrong_name(name, value)
        if wrong is not None:
            raise invalid(where, wrong)
        if isinstance(check, _Shape):
            raise invalid(where, f"has a wrong value in field {name!r} ({check.rule})")
        raise invalid(where, f"has a wrong value in field {name!r}")
    return obj


def parse_workspace(obj: Any, where: str) -> dict[str, Any]:
    """One line of workspaces.jsonl: its shape. A path holding a control character is an old
    store's (one could register such a folder before 2026-11-30): it does not refuse the
    archive - the import registers no such folder and keeps its memories out
    (`archive_import.Placement.workspaces`); until 2026-11-30 it refused the whole archive."""
    return checked(obj, WORKSPACE_SPEC, where)


def _wrong_action(action: str) -> str | None:
    """Why `action` cannot be a kept memory's revision's, or None when it can."""
    if action in KEPT_ACTIONS:
        return None
    shown = repr(action[:40]) + ("..." if len(action) > 40 else "")
    return (
        f"has a wrong value in field 'action' ({shown} is not an action any write records for a "
        f"kept memory: one of {', '.join(KEPT_ACTIONS)})"
    )


@dataclass(frozen=True)
class ArchivedMemory:
    memory: Memory
    revisions: tuple[Revision, ...]
    relations: tuple[Relation, ...]  # from this memory; `id` 0 (relation ids are a store's own)


@dataclass(frozen=True)
class Tombstone:
    memory_id: str
    content_hash: str
    scope: str
    workspace_id: str | None
    session_id: str | None
    forgotten_by: str
    forgotten_at: int
    reason: str | None


def _common(r: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a memory and a revision share, as the model's values."""
    return {
        "revision": r["revision"],
        "content": r["content"],
        "summary": r["summary"],
        "kind": r["kind"],
        "scope": Scope(r["scope"]),
        "workspace_id": r["workspace_id"],
        "session_id": r["session_id"],
        "tags": tuple(r["tags"]),
        "keywords": r["keywords"],
        "importance": r["importance"],
        "pinned": r["pinned"],
        "status": Status(r["status"]),
        "tier": Tier(r["author_tier"]),
        "expires_at": r["expires_at"],
    }


def _follows_rules(r: Mapping[str, Any], where: str) -> None:
    """The rules no write ever broke, for a memory or any of its revisions: content not empty,
    no control character writes always refused in a text field (a C1 control passed until
    2026-11-30: the import keeps only that memory out), each tag not empty, a kind's name well
    formed."""
    try:
        check_text("content", r["content"], _ANY_SIZE, refused=EVER_REFUSED)
        for name in ("summary", "keywords", "source"):
            if r.get(name) is not None:
                check_text(name, r[name], _ANY_SIZE, allow_empty=True, refused=EVER_REFUSED)
        for tag in r["tags"]:
            check_text("tags", tag, _ANY_SIZE, refused=EVER_REFUSED)
    except CairnError as e:
        raise invalid(where, f"breaks a rule of every write: {e.message}") from e
    # a name `memory.extra_kinds` may add: any kind is one (an old export's `decision\n` is
    # `decision`: the import renames it, core/old_names.py)
    if not KIND_WORD.fullmatch(as_now(r["kind"])):
        raise invalid(where, "breaks a rule of every write: field 'kind' is not a kind's name")


def _fits(m: Mapping[str, Any], limits: Limits, where: str) -> None:
    """A memory's current state within this store's limits, its kind one this store knows and
    its tags as a write leaves them (trimmed, lower case, each once) - what every write here is
    held to. Older revisions are history: written under other limits, they come in as they are.
    """

    def utf8(name: str) -> int:
        return len((m[name] or "").encode("utf-8"))

    longest = max((len(t) for t in m["tags"]), default=0)
    sizes = (
        ("field 'content'", utf8("content"), "bytes", "limits.max_content_bytes"),
        ("field 'summary'", utf8("summary"), "bytes", "limits.max_summary_bytes"),
        ("field 'keywords'", utf8("keywords"), "bytes", "limits.max_keywords_bytes"),
        ("field 'source'", len(m["source"] or ""), "characters", "limits.max_source_chars"),
        ("a tag in field 'tags'", longest, "characters", "limits.max_tag_chars"),
        ("field 'tags'", len(m["tags"]), "tags", "limits.max_tags"),
    )
    for what, size, unit, setting in sizes:
        limit = getattr(limits, setting.removeprefix("limits."))
        if size > limit:
            raise invalid(
                where,
                f"breaks a rule of this store: {what} is {size} {unit} and {setting} here is "
                f"{limit} (set it higher and import again)",
            )
    try:
        check_kind(as_now(m["kind"]), limits)
    except CairnError as e:
        raise invalid(
            where,
            f"breaks a rule of this store: {e.message}; add it to memory.extra_kinds and import "
            "again",
        ) from e
    try:
        tags = check_tags(tuple(m["tags"]), limits)
    except CairnError as e:  # a tag that grows past the limit as a write leaves it
        raise invalid(where, f"breaks a rule of this store: {e.message}") from e
    if tags != tuple(m["tags"]):
        raise invalid(
            where,
            f"breaks a rule of every write: field 'tags' is {m['tags']!r}, not as a write leaves "
            f"them ({list(tags)!r}: trimmed, lower case, each once)",
        )


def _scan_marks(flags: list[str], where: str) -> None:
    """A mark this Cairn does not make itself (a newer scanner's `scan:` rule) scanned like every
    text an import stores: one holding a secret refuses the archive, without showing it."""
    for flag in flags:
        rule = secret_rule(flag) if flag not in FLAGS else None
        if rule is not None:
            raise invalid(
                where,
                f"has a wrong value in field 'flags' (a scan: mark looks like a secret (rule "
                f"{rule}); {_FLAGS.rule})",
            )


def parse_memory(
    obj: Any, where: str, limits: Limits, *, checked_before: bool = False
) -> ArchivedMemory:
    """One line of memories.jsonl, checked field by field, against itself, and against the
    rules of the write path (`limits`: this store's). `checked_before`: the same line passed
    these checks already (an import reads it again, its digest unchanged:
    `core/archive_memories.py`) - it is only built again."""
    if checked_before:
        m = breaks_as_now(obj, *_TEXTS)
        raw = [breaks_as_now(r, *_TEXTS, "reason") for r in m["revisions"]]
        return _built(m, raw, [breaks_as_now(link, "note") for link in m["relations"]])
    m = breaks_as_now(checked(obj, MEMORY_SPEC, where), *_TEXTS)
    raw = [
        breaks_as_now(checked(r, REVISION_SPEC, f"{where} revision {i}"), *_TEXTS, "reason")
        for i, r in enumerate(m["revisions"], 1)
    ]
    for i, r in enumerate(raw, 1):
        _follows_rules(r, f"{where} revision {i}")
        wrong = _wrong_action(r["action"])
        if wrong is not None:  # a `forget` here would say a kept memory was forgotten
            raise invalid(f"{where} revision {i}", wrong)
    _follows_rules(m, where)
    _fits(m, limits, where)
    _scan_marks(m["flags"], where)
    if [r["revision"] for r in raw] != list(range(1, m["revision"] + 1)):
        raise invalid(where, f"does not hold revisions 1 to {m['revision']} in order")
    if any(raw[-1][k] != m[k] for k in _SHARED if k != "created_at"):
        raise invalid(where, "has a current state that differs from its last revision")
    if m["scope"] == Scope.PROJECT and m["workspace_id"] is None:
        raise invalid(where, "is a project memory without a workspace")
    if m["scope"] == Scope.SESSION and m["session_id"] is None:
        raise invalid(where, "is a session memory without a session")
    if m["superseded_by"] == m["id"]:  # hidden behind itself for good
        raise invalid(
            where,
            "has a wrong value in field 'superseded_by' (the memory's own id: no write "
            "supersedes a memory by itself)",
        )
    return _built(m, raw, _relations(m, where))


def _relations(m: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The memory's relations, each checked."""
    out = []
    named: set[tuple[str, str]] = set()
    for i, link in enumerate(m["relations"], 1):
        r = breaks_as_now(checked(link, RELATION_SPEC, f"{where} relation {i}"), "note")
        if (r["kind"], r["to_id"]) in named:  # a store holds a relation once
            raise invalid(
                f"{where} relation {i}", f"repeats the {r['kind']} relation to {r['to_id']}"
            )
        named.add((r["kind"], r["to_id"]))
        if r["to_id"] == m["id"]:
            raise invalid(
                f"{where} relation {i}",
                "has a wrong value in field 'to_id' (the memory's own id: no write relates a "
                "memory to itself)",
            )
        if r["note"] is not None:
            try:
                # a control character only drops the note at import (a store from before
                # 2026-11-30 may hold one): its own export must come back in
                utf8_size("note", r["note"])
            except CairnError as e:
                raise invalid(f"{where} relation {i}", f"breaks a rule: {e.message}") from e
        out.append(r)
    return out


def _built(
    m: Mapping[str, Any], raw: list[dict[str, Any]], links: list[dict[str, Any]]
) -> ArchivedMemory:
    """The records of a checked memory line: the memory, its revisions, its relations."""
    memory = Memory(
        id=m["id"],
        **_common(m),
        agent=m["agent"],
        source=m["source"],
        origin=Origin(m["origin"]) if m["origin"] else None,
        created_at=m["created_at"],
        updated_at=m["updated_at"],
        dedupe_key=m["dedupe_key"],
        superseded_by=m["superseded_by"],
        use_count=m["use_count"],
        last_recalled_at=m["last_recalled_at"],
        flags=tuple(m["flags"]),
    )
    revisions = tuple(
        Revision(
            memory_id=memory.id,
            **_common(r),
            actor=r["actor"],
            action=r["action"],
            reason=r["reason"],
            created_at=r["created_at"],
        )
        for r in raw
    )
    relations = tuple(
        Relation(id=0, from_id=memory.id, **(r | {"kind": RelationKind(r["kind"])})) for r in links
    )
    return ArchivedMemory(memory, revisions, relations)
