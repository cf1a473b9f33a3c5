"""Names stored before the whole-match rule of 2026-11-30, and their repair.

Until then a name's pattern ended in `$`, which also matches before a final line break, so a
store could take an agent `helper\\n` (a name of its own, beside `helper`), a document
`soul:helper\\n` and an extra kind `decision\\n`. No door accepts such a name now, so none could
name them again: the agent could not be paused or revoked, the document not read, an export
holding one not imported. Schema 2.1 renames every such name in the store: an agent or a document
to the name without the line break (a name ending in `\\r\\n` or in several line breaks, which
an edited export may hold, is renamed alike: without all of them), or, when another holds that
name, to the first free `NAME-2`, `NAME-3`...; a kind to its name without the line break (a kind
is a label, so the two spellings become one kind). Each rename is audited (`name_renamed`) and
logged, and remembered in the store, so that an old export imported later gets the same names;
the policy file and the token store, which live outside the store, are brought in line when
Cairn next opens the store.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sqlite3
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
import tomlkit.items

from core.atomic_file import write_atomically
from core.keychain import TokenStore
from core.model import RESERVED_AGENT_NAMES
from core.toml_text import TextRefused, read_text

log = logging.getLogger(__name__)

BREAKS = "\r\n"  # `$` let one "\n" through at the very end; "\r\n" and several are renamed alike
SOUL = "soul:"
_AGENT = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_DOC_AGENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # `soul:<name>` takes upper case
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_MAX_NAME = 64

RENAMED_KEY = "renamed_names"  # meta: every rename so far, {"agents": {...}, "kinds": {...}}
TO_CARRY_KEY = "renames_to_carry"  # meta: renames the policy file and token store still need

# Where the store holds an agent's name (the audit ledger is history and keeps the name as it
# was then: its `name_renamed` event says what became of it).
AGENT_COLUMNS = (
    ("agent", "name"),
    ("memory", "agent"),
    ("revision", "actor"),
    ("feedback", "agent"),
    ("suggestion", "agent"),
    ("review_decision", "agent"),
    ("review_decision", "decided_by"),
    ("relation", "created_by"),
    ("relation", "resolved_by"),
    ("tombstone", "forgotten_by"),
    ("identity_version", "author"),
    ("idempotency", "actor"),
    ("scan_allow", "allowed_by"),
)
KIND_COLUMNS = (("memory", "kind"), ("revision", "kind"), ("suggestion", "kind"))


def _base(name: str) -> str:
    """`name` without the line breaks it ends in."""
    return name.rstrip(BREAKS)


def old_shape(name: object, pattern: re.Pattern[str] = _AGENT) -> bool:
    """Whether `name` is a valid name followed by line breaks - what `$` let through (one
    `\\n`; an edited export may hold `\\r\\n` or several)."""
    return (
        isinstance(name, str) and _base(name) != name and pattern.fullmatch(_base(name)) is not None
    )


def old_kind(kind: object) -> bool:
    return old_shape(kind, _KIND)


def old_doc(doc: object) -> bool:
    return isinstance(doc, str) and doc.startswith(SOUL) and old_shape(doc[len(SOUL) :], _DOC_AGENT)


def as_now(name: str) -> str:
    """`name` without the line breaks an old name ends in - the name a check of today's rules
    should see; any other name as it is."""
    if old_shape(name, _AGENT) or old_kind(name) or old_doc(name):
        return _base(name)
    return name


@dataclass(frozen=True)
class Renames:
    """Old name -> new name, for agents (a document `soul:<agent>` follows its agent) and kinds."""

    agents: dict[str, str] = field(default_factory=dict)
    kinds: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.agents or self.kinds)

    def agent(self, name: str) -> str:
        return self.agents.get(name, name)

    def kind(self, kind: str) -> str:
        return self.kinds.get(kind, kind)

    def doc(self, doc: str) -> str:
        if doc.startswith(SOUL) and doc[len(SOUL) :] in self.agents:
            return SOUL + self.agents[doc[len(SOUL) :]]
        return doc

    def merged(self, other: Renames) -> Renames:
        return Renames({**self.agents, **other.agents}, {**self.kinds, **other.kinds})

    def to_json(self) -> str:
        return json.dumps({"agents": self.agents, "kinds": self.kinds}, sort_keys=True)

    @staticmethod
    def from_json(text: str | None) -> Renames:
        if not text:
            return Renames()
        data = json.loads(text)
        return Renames(dict(data.get("agents", {})), dict(data.get("kinds", {})))

    def items(self) -> list[dict[str, str]]:
        """Each rename as `{what, was, now}` (what: agent or kind), for a report."""
        return [{"what": "agent", "was": o, "now": n} for o, n in sorted(self.agents.items())] + [
            {"what": "kind", "was": o, "now": n} for o, n in sorted(self.kinds.items())
        ]


def _free(base: str, taken: set[str], pattern: re.Pattern[str]) -> str:
    """`base` when it is a name nobody holds, else the first free `base-2`, `base-3`..."""
    if base not in taken and base not in RESERVED_AGENT_NAMES:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        candidate = base[: _MAX_NAME - len(suffix)] + suffix
        if pattern.fullmatch(candidate) and candidate not in taken:
            return candidate
        n += 1


def plan(
    agents: Iterable[str],
    doc_agents: Iterable[str],
    kinds: Iterable[str],
    *,
    taken: Iterable[str],
    known: Renames,
    reserved: Iterable[str] = (),
) -> Renames:
    """The renames for the names given: `agents` as agents hold them, `doc_agents` the `<name>`
    of `soul:<name>` documents, `kinds` memories' kinds. A name `known` renamed keeps that name;
    another takes its name without the line break unless a name in `taken` (or one given here)
    holds it already. `reserved` are agents named with a name Cairn keeps for itself
    (`RESERVED_AGENT_NAMES`: `human`, `cairn`...), which no agent may take since 2026-11-30:
    each becomes the first free `NAME-2`, `NAME-3`... (the caller decides where such a name is
    an agent's: `human` in who-acted is the person).
    """
    agent_names = {a for a in agents if a is not None}
    names = agent_names | set(doc_agents)
    held = set(taken) | names | set(known.agents.values())
    out: dict[str, str] = {}
    for old in sorted(set(reserved) & RESERVED_AGENT_NAMES):
        out[old] = known.agents.get(old) or _free(old, held, _AGENT)
        held.add(out[old])
    for old in sorted(names):
        as_agent = old_shape(old, _AGENT)
        if not (as_agent or (old not in agent_names and old_shape(old, _DOC_AGENT))):
            continue
        if old in known.agents:
            out[old] = known.agents[old]
            continue
        new = _free(_base(old), held, _AGENT if as_agent else _DOC_AGENT)
        out[old] = new
        held.add(new)
    renamed_kinds = {
        k: known.kind(k) if k in known.kinds else _base(k) for k in kinds if old_kind(k)
    }
    return Renames(out, renamed_kinds)


# -- the store (schema 2.1) ---------------------------------------------------------------------


def _column(conn: sqlite3.Connection, table: str, column: str) -> set[str]:
    return {
        str(r[0])
        for r in conn.execute(f"SELECT DISTINCT {column} FROM {table} WHERE {column} IS NOT NULL")  # noqa: S608 - fixed names
    }


def rename_in_store(conn: sqlite3.Connection, now: int) -> Renames:
    """Inside the migration's transaction: rename every old name the store holds, audit and log
    each rename (stamped `now`: Cairn's clock, ms), fix the policy copy kept in `meta`, and
    remember the renames. Returns them."""
    names: set[str] = set()
    for table, column in AGENT_COLUMNS:
        names |= _column(conn, table, column)
    docs = _column(conn, "identity_version", "doc")
    doc_agents = {d[len(SOUL) :] for d in docs if d.startswith(SOUL)}
    kinds: set[str] = set()
    for table, column in KIND_COLUMNS:
        kinds |= _column(conn, table, column)
    saved = conn.execute("SELECT value FROM meta WHERE key = 'policy'").fetchone()
    policy: dict[str, Any] | None = None
    if saved is not None:
        with contextlib.suppress(ValueError):
            policy = json.loads(saved[0])
    policy_agents = set(policy.get("agents", {})) if isinstance(policy, dict) else set()
    kinds |= _policy_kinds(policy)
    known = Renames.from_json(_meta(conn, RENAMED_KEY))
    # A name renamed before, written again by an older Cairn (core/old_writes.py), whose new name
    # is held now: it takes the first free name, as any old name does whose name is held -
    # following the record would put it onto the holder's rows (an agent's key, a document's
    # versions).
    held = names | doc_agents
    free = Renames({o: n for o, n in known.agents.items() if n not in held}, known.kinds)
    renames = plan(names | policy_agents, doc_agents, kinds, taken=held, known=free)
    if not renames:
        return renames
    for old, new in sorted(renames.agents.items()):
        for table, column in AGENT_COLUMNS:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (new, old))  # noqa: S608
        conn.execute("UPDATE identity_version SET doc = ? WHERE doc = ?", (SOUL + new, SOUL + old))
        _audit(conn, now, "agent", old, new)
    for old, new in sorted(renames.kinds.items()):
        for table, column in KIND_COLUMNS:
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (new, old))  # noqa: S608
        _audit(conn, now, "kind", old, new)
    if policy is not None:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'policy'",
            (json.dumps(renamed_policy(policy, renames), sort_keys=True),),
        )
    # the record keeps a name's first rename: an old export holding it names that agent
    _set_meta(conn, RENAMED_KEY, renames.merged(known).to_json())
    carry = Renames.from_json(_meta(conn, TO_CARRY_KEY)).merged(renames)
    _set_meta(conn, TO_CARRY_KEY, carry.to_json())
    return renames


def _audit(conn: sqlite3.Connection, now: int, what: str, old: str, new: str) -> None:
    detail = {"what": what, "was": old, "now": new}
    if what == "agent":
        detail["agent"] = new
    conn.execute(
        "INSERT INTO audit (at, actor_kind, actor, verified, action, detail) "
        "VALUES (?, 'system', 'system', 0, 'name_renamed', ?)",
        (now, json.dumps(detail, ensure_ascii=False, sort_keys=True)),
    )
    log.warning(
        "the %s %r ends in a line break, which no name may since 2026-11-30: renamed %r",
        what,
        old,
        new,
    )


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def recorded(conn: sqlite3.Connection) -> Renames:
    """Every rename this store has made (by the migration or an import)."""
    return Renames.from_json(_meta(conn, RENAMED_KEY))


def remember(conn: sqlite3.Connection, renames: Renames) -> None:
    """Inside a write transaction: add `renames` to the store's record of renames."""
    if renames:
        _set_meta(conn, RENAMED_KEY, recorded(conn).merged(renames).to_json())


def taken_names(conn: sqlite3.Connection) -> set[str]:
    """Every agent name the store holds, and the `<name>` of every `soul:<name>` document."""
    names: set[str] = set()
    for table, column in AGENT_COLUMNS:
        names |= _column(conn, table, column)
    return names | {
        d[len(SOUL) :] for d in _column(conn, "identity_version", "doc") if d.startswith(SOUL)
    }


# -- the policy -------------------------------------------------------------------------------


def _policy_kinds(policy: Any) -> set[str]:
    if not isinstance(policy, Mapping):
        return set()
    kinds = set(policy.get("kinds", {}) if isinstance(policy.get("kinds"), MutableMapping) else ())
    for rule in (policy.get("agents") or {}).values():
        if isinstance(rule, Mapping) and isinstance(rule.get("kinds"), Mapping):
            kinds |= set(rule["kinds"])
    return kinds


def _renamed_keys(table: MutableMapping[str, Any], rename: Mapping[str, str]) -> None:
    """Rename the keys of a TOML or JSON table in place, keeping their order and values."""
    for old, new in rename.items():
        if old in table and new not in table:
            table[new] = table.pop(old)


_STRICTNESS = ("auto", "ask", "off")  # the capture policy's modes, loosest first


def _mode(value: object) -> str | None:
    text = str(value).strip().lower() if isinstance(value, str) else None
    return text if text in _STRICTNESS else None


def _merged_kinds(table: MutableMapping[str, Any], rename: Mapping[str, str]) -> None:
    """Rename the kinds of a policy's kinds table like `_renamed_keys`; a kind the table names
    under both spellings (`decision` and `"decision\\n"`, one kind since the rename) keeps the
    stricter of its two rules - one spelling turned off meant agents should not store it
    unasked - and, in the file, a comment saying so. A value that is no mode is left for the
    policy's own message."""
    for old, new in rename.items():
        if old not in table:
            continue
        if new not in table:
            table[new] = table.pop(old)
            continue
        kept, dropped = _mode(table[new]), _mode(table[old])
        if kept is None or dropped is None:
            continue
        stricter = max(kept, dropped, key=_STRICTNESS.index)
        note = (
            f"{new} was {kept!r} and {old!r} was {dropped!r}: one kind since 2026-11-30, the "
            "stricter kept"
        )
        del table[old]
        if isinstance(
            table, tomlkit.items.Table | tomlkit.items.InlineTable | tomlkit.TOMLDocument
        ):
            item = tomlkit.item(stricter)
            item.comment(note)
            table[new] = item
        else:
            table[new] = stricter
        log.warning("policy: kind %s", note)


def renamed_policy(policy: MutableMapping[str, Any], renames: Renames) -> MutableMapping[str, Any]:
    """A policy as `Policy.to_dict()` gives it (or as its file holds it), with the renames."""
    if isinstance(policy.get("kinds"), MutableMapping):
        _merged_kinds(policy["kinds"], renames.kinds)
    agents = policy.get("agents")
    if isinstance(agents, MutableMapping):
        _renamed_keys(agents, renames.agents)
        for rule in agents.values():
            if isinstance(rule, Mapping) and isinstance(rule.get("kinds"), MutableMapping):
                _merged_kinds(rule["kinds"], renames.kinds)
    return policy


# -- outside the store --------------------------------------------------------------------------


class NotCarried(Exception):
    """The policy file cannot take the renames now (not UTF-8, not valid TOML): they wait in the
    store for the next start. The message says why and which renames wait."""


def to_carry(conn: sqlite3.Connection) -> Renames:
    """The store's renames still to be carried outside it (none on nearly every store)."""
    return Renames.from_json(_meta(conn, TO_CARRY_KEY))


def carry_renames(renames: Renames, policy_path: Path, tokens: TokenStore) -> None:
    """Carry the store's `renames` (`to_carry`) to the policy file (its agents' sections and
    kinds, comments kept) and the token store (a renamed agent's token under its new name).
    Both are done again harmlessly if Cairn stops before the store forgets them: the caller
    clears `TO_CARRY_KEY` (`carried`) once this returns.

    Raises:
        NotCarried: the policy file is not UTF-8, not valid TOML, no regular file (a FIFO) or
            over 1 MiB - the person's own mistake,
            which the policy window names; the token store was carried, the file was left as it
            is, and the caller keeps the renames for the next start (until 2026-11-30 a file
            that was not UTF-8 stopped every start, and one with a syntax error lost them).
        FileNotWritten: the token file or the policy file could not be written (a full disk,
            a folder that takes no new file): the file is left as it was and the caller keeps
            the renames for the next start.
    """
    for old, new in sorted(renames.agents.items()):
        token = tokens.get(old)
        if token is not None:
            if tokens.get(new) is None:
                tokens.set(new, token)
            tokens.delete(old)
            log.warning("the token of agent %r is now kept as agent %r's", old, new)
    try:
        text = read_text(policy_path)  # never waited on (a FIFO), never past 1 MiB
    except FileNotFoundError:
        return
    except UnicodeDecodeError as e:
        raise NotCarried(_waiting(policy_path, "is not valid UTF-8", renames)) from e
    except TextRefused as e:
        raise NotCarried(_waiting(policy_path, e.reason, renames)) from e
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.TOMLKitError as e:
        raise NotCarried(_waiting(policy_path, "is not valid TOML", renames)) from e
    renamed_policy(doc, renames)
    fixed = tomlkit.dumps(doc)
    if fixed != text:
        write_atomically(  # into the file a linked policy.toml points to, as `policy set` does
            Path(os.path.realpath(policy_path)),
            fixed,
            what="policy file",
            mode=0o600,
            outcome=f"the names renamed in the store ({_listed(renames)}) are renamed in it at "
            "the next start",
        )
        log.warning("renamed the old names in %s: %s", policy_path, _listed(renames))


def _waiting(policy_path: Path, why: str, renames: Renames) -> str:
    return (
        f"{policy_path} {why}, so the names renamed in the store ({_listed(renames)}) are not "
        "renamed in it yet; fix the file and Cairn renames them at its next start"
    )


def carried(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM meta WHERE key = ?", (TO_CARRY_KEY,))


def _listed(renames: Renames) -> str:
    return ", ".join(f"{i['was']!r} -> {i['now']!r}" for i in renames.items())
