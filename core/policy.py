"""Capture policy: what agents may remember without a person's say - the model, its rules, and
reading it from the human-edited TOML file (`core/policy_file.py` keeps file and policy in step).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import tomlkit
import tomlkit.exceptions

from core.agents import NAME as AGENT_NAME
from core.model import RESERVED_AGENT_NAMES, Scope
from core.scanner import secret_rule
from core.toml_text import KeyLines, TooDeep, key_lines
from core.wording import cut

log = logging.getLogger(__name__)

POLICY_FILE = "policy.toml"
WIDE_SCOPES = (Scope.GLOBAL, Scope.USER)
# Agent names are lower case (`core.agents.NAME`): until 2026-11-30 an override for `Claude-Code`
# was taken here, and could never apply to any agent.
_NAME_RULE = (
    "agent names are 1-64 characters of lower-case letters, digits, '.', '_' or '-', starting "
    "with a letter or digit"
)


class Mode(StrEnum):
    """What happens to an agent's write."""

    AUTO = "auto"  # it lands
    ASK = "ask"  # it waits in the review queue for a person
    OFF = "off"  # it is refused; nothing is stored

    @property
    def severity(self) -> int:
        return {Mode.AUTO: 0, Mode.ASK: 1, Mode.OFF: 2}[self]


class PolicyInvalid(Exception):
    """The policy file cannot be applied: `line` (1-based, when known) and a reason."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.reason}"


@dataclass(frozen=True)
class AgentRule:
    """Per-agent overrides. A looser value than the general rule applies only to an agent verified
    by a token a person issued (`Caller.registered`: not a self-enrolled one); a stricter one
    applies to anyone using the name."""

    kinds: Mapping[str, Mode] = field(default_factory=dict)
    scopes: Mapping[Scope, Mode] = field(default_factory=dict)
    extracted: Mode | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.kinds:
            out["kinds"] = {k: m.value for k, m in self.kinds.items()}
        if self.scopes:
            out["scopes"] = {s.value: m.value for s, m in self.scopes.items()}
        if self.extracted is not None:
            out["extracted"] = self.extracted.value
        return out


@dataclass(frozen=True)
class Ruling:
    """The policy's answer for one write: the mode and why (the rules that set it)."""

    mode: Mode
    reasons: tuple[str, ...]  # "kind:idea", "scope:user", "extracted", "paused"


DEFAULT_KINDS: Mapping[str, Mode] = {
    "fact": Mode.AUTO,
    "preference": Mode.AUTO,
    "convention": Mode.AUTO,
    "procedure": Mode.AUTO,
    "pitfall": Mode.AUTO,
    "correction": Mode.ASK,
    "insight": Mode.AUTO,
    "idea": Mode.ASK,
}


@dataclass(frozen=True)
class Policy:
    paused: bool = False
    kinds: Mapping[str, Mode] = field(default_factory=lambda: dict(DEFAULT_KINDS))
    other_kinds: Mode = Mode.ASK  # kinds the file does not list (added in settings)
    scopes: Mapping[Scope, Mode] = field(
        default_factory=lambda: {Scope.GLOBAL: Mode.ASK, Scope.USER: Mode.ASK}
    )
    extracted: Mode = Mode.ASK
    agents: Mapping[str, AgentRule] = field(default_factory=dict)

    def rule(
        self,
        *,
        agent: str | None,
        verified: bool,
        kind: str | None,
        scope: Scope | None,
        extracted: bool,
    ) -> Ruling:
        """The strictest of the kind's, the scope's and the origin's modes for this agent
        (`None` leaves a rule out: an update that keeps its kind is not decided again by kind).
        Pause is not part of this: the caller refuses before asking (it wins over everything)."""
        override = self.agents.get(agent) if agent else None

        def pick(base: Mode, special: Mode | None) -> Mode:
            if special is None:
                return base
            if special.severity >= base.severity or verified:
                return special
            return base  # a looser override for an unverified name claims nothing

        candidates: list[tuple[Mode, str]] = []
        if kind is not None:
            special = override.kinds.get(kind) if override else None
            candidates.append(
                (pick(self.kinds.get(kind, self.other_kinds), special), f"kind:{kind}")
            )
        if scope in WIDE_SCOPES:
            special = override.scopes.get(scope) if override else None
            candidates.append(
                (pick(self.scopes.get(scope, Mode.ASK), special), f"scope:{scope.value}")
            )
        if extracted:
            special = override.extracted if override else None
            candidates.append((pick(self.extracted, special), "extracted"))
        if not candidates:
            return Ruling(Mode.AUTO, ())
        mode = max((m for m, _ in candidates), key=lambda m: m.severity)
        return Ruling(mode, tuple(why for m, why in candidates if m is mode))

    def to_dict(self) -> dict[str, Any]:
        return {
            "paused": self.paused,
            "kinds": {k: m.value for k, m in self.kinds.items()},
            "other_kinds": self.other_kinds.value,
            "scopes": {s.value: m.value for s, m in self.scopes.items()},
            "extracted": self.extracted.value,
            "agents": {name: rule.to_dict() for name, rule in sorted(self.agents.items())},
        }


# -- reading the file --------------------------------------------------------------------------


def _mode(value: object, where: str, *, line: int | None) -> Mode:
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return Mode(value.strip().lower())
    raise PolicyInvalid(
        f'{cut(where, 120)}: expected "auto", "ask" or "off", got {_shown(value)}', line
    )


def _scope(value: str, where: str, *, line: int | None) -> Scope:
    try:
        scope = Scope(value)
    except ValueError:
        scope = None
    if scope not in WIDE_SCOPES:
        raise PolicyInvalid(
            f"{cut(where, 120)}: only the wide scopes global and user have a rule, not "
            f"{_shown(value)}",
            line,
        )
    assert scope is not None
    return scope


def _key(key: str) -> str:
    """A key of the file as a message shows it: as TOML writes it (tomlkit's own spelling: bare
    when it can be, else quoted with escapes), and with every character still not printable
    escaped too - tomlkit writes C1 controls and format characters as they are (until 2026-11-30
    a key `"bot\\n"` was shown with a raw line break, splitting the message); cut to 60
    characters."""
    return cut(
        "".join(
            c if c.isprintable() else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
            for c in tomlkit.key(key[:61]).as_string()  # no more is shown
        )
    )


def _shown(value: object) -> str:
    """A value (or a name) of the file as a message shows it: as Python writes it, cut."""
    return cut(repr(value))


_AT_LINE = re.compile(r"\(at line (\d+)")
# A policy file is a few KB. Until 2026-11-30 there was no cap: parsing takes ~20 us a line, so
# an 8 MB file (a log written into it by mistake) held up every later edit and `policy.set`.
MAX_POLICY_CHARS = 1024 * 1024


def _document(text: str) -> tuple[dict[str, Any], KeyLines]:
    """The file's text as TOML, and where each of its keys is written - checked before any
    parser reads it (its size, its nesting)."""
    if len(text) > MAX_POLICY_CHARS:
        raise PolicyInvalid(
            f"file too big: {len(text):,} characters, where a policy file is a few KB and Cairn "
            "reads at most 1 MiB - was something else written into it?"
        )
    try:  # past it the parsers take minutes (a dotted key) or raise RecursionError (arrays)
        lines = key_lines(text)
    except TooDeep as e:
        raise PolicyInvalid(e.reason, e.line) from e
    # The standard parser names the line at fault. (Until 2026-12-01 tomlkit parsed the text
    # again for the values: 6 s of a 1 MiB file; it is only needed to write a change back.)
    try:
        return tomllib.loads(text), lines
    except tomllib.TOMLDecodeError as e:
        at = _AT_LINE.search(str(e))
        line = int(at.group(1)) if at else None
        if line is None and "(at end of document)" in str(e):  # the last line's fault
            line = text.count("\n") + 1
        raise PolicyInvalid(f"not valid TOML: {e}", line) from e


def parse_policy(text: str, known_kinds: Sequence[str]) -> Policy:
    """Read the policy file's text. Raises PolicyInvalid naming the line and what is wrong."""
    doc, lines = _document(text)
    allowed = {"paused", "kinds", "other_kinds", "scopes", "extracted", "agents"}
    for key in doc:
        if key not in allowed:
            raise PolicyInvalid(
                f"unknown setting {_shown(key)} (allowed: {', '.join(sorted(allowed))})",
                lines.line(key),
            )
    paused = doc.get("paused", False)
    if not isinstance(paused, bool):
        raise PolicyInvalid(
            f"paused: expected true or false, got {_shown(paused)}", lines.line("paused")
        )
    kinds = {
        **DEFAULT_KINDS,
        **_kind_modes(
            lines, ("kinds",), doc.get("kinds", {}), known_kinds, "[kinds] must be a table"
        ),
    }
    other = _mode(
        doc.get("other_kinds", Mode.ASK.value), "other_kinds", line=lines.line("other_kinds")
    )
    scopes = {Scope.GLOBAL: Mode.ASK, Scope.USER: Mode.ASK} | _scope_modes(
        lines, ("scopes",), doc.get("scopes", {}), "[scopes] must be a table"
    )
    extracted = _mode(
        doc.get("extracted", Mode.ASK.value), "extracted", line=lines.line("extracted")
    )
    raw_agents = doc.get("agents", {})
    if not isinstance(raw_agents, dict):
        raise PolicyInvalid("[agents] must be a table of agents", lines.line("agents"))
    agents = {name: _parse_agent(lines, name, raw, known_kinds) for name, raw in raw_agents.items()}
    return Policy(paused, kinds, other, scopes, extracted, agents)


_KINDS_EXAMPLE = '{ idea = "auto" }'
_SCOPES_EXAMPLE = '{ user = "auto" }'


def _parse_agent(lines: KeyLines, name: str, raw: object, known_kinds: Sequence[str]) -> AgentRule:
    line = lines.line("agents", name)
    secret = secret_rule(name)  # first: the other messages show the name
    if secret is not None:  # policy.get shows agent names to every agent
        raise PolicyInvalid(f"agents: an agent name looks like a secret (rule {secret})", line)
    if not AGENT_NAME.fullmatch(name):
        raise PolicyInvalid(f"agents.{_key(name)}: not a valid agent name ({_NAME_RULE})", line)
    if name in RESERVED_AGENT_NAMES:  # as `policy set` and every other door refuse it
        raise PolicyInvalid(
            f"agents.{_key(name)}: the agent name is reserved for Cairn's own", line
        )
    if not isinstance(raw, dict):
        raise PolicyInvalid(f"agents.{_key(name)} must be a table", line)
    for key in raw:
        if key not in ("kinds", "scopes", "extracted"):
            raise PolicyInvalid(
                f"agents.{_key(name)}.{_key(key)}: unknown override (allowed: extracted, kinds, "
                "scopes)",
                lines.line("agents", name, key),
            )
    # Each override group must be a table: until 2026-11-30 `kinds = "auto"` here raised a
    # ValueError (Cairn did not start; a running one's watcher died), `kinds = ["ab"]` read
    # as a kind "a".
    kinds = _kind_modes(
        lines,
        ("agents", name, "kinds"),
        raw.get("kinds", {}),
        known_kinds,
        f"agents.{_key(name)}.kinds must be a table of kind = mode, like {_KINDS_EXAMPLE}",
    )
    scopes = _scope_modes(
        lines,
        ("agents", name, "scopes"),
        raw.get("scopes", {}),
        f"agents.{_key(name)}.scopes must be a table of scope = mode, like {_SCOPES_EXAMPLE}",
    )
    extracted = None
    if "extracted" in raw:
        extracted = _mode(
            raw["extracted"],
            f"agents.{_key(name)}.extracted",
            line=lines.line("agents", name, "extracted"),
        )
    return AgentRule(kinds, scopes, extracted)


def _kind_modes(
    lines: KeyLines,
    path: tuple[str, ...],
    raw: object,
    known_kinds: Sequence[str],
    not_a_table: str,
) -> dict[str, Mode]:
    """The `kind = mode` table at `path` (`kinds`, `agents.<name>.kinds`); `not_a_table` is
    said when it is none."""
    if not isinstance(raw, dict):
        raise PolicyInvalid(not_a_table, lines.line(*path))
    modes: dict[str, Mode] = {}
    for kind, value in raw.items():
        where, line = ".".join(map(_key, (*path, kind))), lines.line(*path, kind)
        if kind not in known_kinds:
            raise PolicyInvalid(f"{where}: unknown kind (known: {', '.join(known_kinds)})", line)
        modes[kind] = _mode(value, where, line=line)
    return modes


def _scope_modes(
    lines: KeyLines, path: tuple[str, ...], raw: object, not_a_table: str
) -> dict[Scope, Mode]:
    """The `scope = mode` table at `path` (`scopes`, `agents.<name>.scopes`)."""
    if not isinstance(raw, dict):
        raise PolicyInvalid(not_a_table, lines.line(*path))
    modes: dict[Scope, Mode] = {}
    for name, value in raw.items():
        where, line = ".".join(map(_key, (*path, name))), lines.line(*path, name)
        modes[_scope(name, where, line=line)] = _mode(value, where, line=line)
    return modes


def policy_from_dict(data: Mapping[str, Any], known_kinds: Sequence[str]) -> Policy:
    """A policy from `Policy.to_dict()` output (the copy kept in the database)."""
    agents = data.get("agents")
    if isinstance(agents, Mapping):
        # A copy saved before agent names had to be lower case may name `Claude-Code`: an
        # override no agent ever met, left out rather than losing the whole copy (a pause, the
        # stricter rules) to the defaults.
        upper = {n for n in agents if n != n.lower() and AGENT_NAME.fullmatch(n.lower())}
        data = {**data, "agents": {n: r for n, r in agents.items() if n not in upper}}
    return parse_policy(tomlkit.dumps(dict(data)), known_kinds)


DEFAULT_TEXT = """\
# Cairn capture policy: what agents may remember without asking you.
#
# For each kind of memory: "auto" (an agent's write lands), "ask" (it waits in the review queue
# for you) or "off" (refused; nothing is stored). The strictest rule that applies wins: the
# kind's, the scope's (for global and user memories) and the origin's (for memories a model
# extracted on its own). Your own writes - windows, the notes folder, imports - are never held.
#
# This file and the Capture policy window are the same thing: Cairn applies a valid edit here
# within a second, keeps the last valid policy when an edit is not valid (Health says which
# line), and writes changes made in the window back here, keeping your comments.

# true stops every agent write (answered "capture_paused") until you set it back to false.
paused = false

# Kinds added in settings (memory.extra_kinds) and not listed below.
other_kinds = "ask"

# Memories a model extracted on its own (origin "extracted") rather than was asked to keep.
extracted = "ask"

[kinds]
fact = "auto"
preference = "auto"
convention = "auto"
procedure = "auto"
pitfall = "auto"
insight = "auto"
# A correction overrides something already known, and an idea is not yet knowledge: both wait.
correction = "ask"
idea = "ask"

[scopes]
# A global or user memory reaches every project you work on, so it waits for you by default.
global = "ask"
user = "ask"

# Per-agent overrides. A looser rule than the ones above ("auto" where they say "ask") applies
# only while the agent presents its token (`cairn agent add`); a stricter one always applies.
#
# [agents.code-helper]
# kinds = { idea = "auto" }
# scopes = { user = "auto" }
# extracted = "auto"
"""


def all_auto(known_kinds: Sequence[str]) -> Policy:
    """Every agent write lands (no review): for benchmarks and for a person who wants it."""
    return Policy(
        kinds=dict.fromkeys(known_kinds, Mode.AUTO),
        other_kinds=Mode.AUTO,
        scopes={Scope.GLOBAL: Mode.AUTO, Scope.USER: Mode.AUTO},
        extracted=Mode.AUTO,
    )


def dumps_policy(policy: Policy) -> str:
    return json.dumps(policy.to_dict(), sort_keys=True)


def with_mode(
    policy: Policy, target: str, mode: Mode | bool, known_kinds: Sequence[str] = ()
) -> Policy:
    """`policy` with one setting changed. `target` is `paused` (with a bool), `other_kinds`,
    `extracted`, `kinds.<kind>`, `scopes.<global|user>`, or an agent's override:
    `agents.<name>.kinds.<kind>`, `agents.<name>.scopes.<scope>`, `agents.<name>.extracted`.
    A kind must be one of `known_kinds` (when given). Raises PolicyInvalid, without a line, for
    an unknown target or kind or a value of the wrong type. (Until 2026-11-30 an unknown kind
    was found only in the file written for it, and named that file's line.)"""
    parts = target.split(".")
    if parts == ["paused"]:
        if not isinstance(mode, bool):
            raise PolicyInvalid("paused takes true or false")
        return replace(policy, paused=mode)
    if isinstance(mode, bool):
        raise PolicyInvalid(f"{target} takes auto, ask or off")
    if parts == ["other_kinds"]:
        return replace(policy, other_kinds=mode)
    if parts == ["extracted"]:
        return replace(policy, extracted=mode)
    if len(parts) == 2 and parts[0] == "kinds":
        _known_kind(target, parts[1], known_kinds)
        return replace(policy, kinds={**policy.kinds, parts[1]: mode})
    if len(parts) == 2 and parts[0] == "scopes":
        scope = _scope(parts[1], target, line=None)
        return replace(policy, scopes={**policy.scopes, scope: mode})
    agent = _agent_target(target)
    if agent is not None:
        return _with_agent_mode(policy, target, *agent, mode, known_kinds=known_kinds)
    raise PolicyInvalid(f"unknown policy setting {_shown(target)}")


def _known_kind(target: str, kind: str, known_kinds: Sequence[str]) -> None:
    if known_kinds and kind not in known_kinds:
        raise PolicyInvalid(f"{cut(target, 120)}: unknown kind (known: {', '.join(known_kinds)})")


def _agent_target(target: str) -> tuple[str, list[str]] | None:
    """(name, rule) of `agents.<name>.<rule>`. Read from the end: an agent's name may hold dots
    (`gpt-4.1`), a rule's kind or scope never does. (Until 2026-11-30 the name was read up to
    its first dot, and every override for such an agent was an "unknown policy setting".)"""
    if not target.startswith("agents."):
        return None
    rest = target.removeprefix("agents.")
    if rest.endswith(".extracted"):
        name, rule = rest.removesuffix(".extracted"), ["extracted"]
    else:
        head, _, key = rest.rpartition(".")
        name, dot, group = head.rpartition(".")
        if not dot or group not in ("kinds", "scopes"):
            return None
        rule = [group, key]
    return (name, rule) if name else None


def _with_agent_mode(
    policy: Policy,
    target: str,
    name: str,
    rest: list[str],
    mode: Mode,
    *,
    known_kinds: Sequence[str],
) -> Policy:
    secret = secret_rule(name)  # first: the other messages show the name
    if secret is not None:  # policy.get shows every agent's name to agents
        raise PolicyInvalid(f"the agent name looks like a secret (rule {secret})")
    if not AGENT_NAME.fullmatch(name):
        raise PolicyInvalid(f"{_shown(name)} is not a valid agent name ({_NAME_RULE})")
    if name in RESERVED_AGENT_NAMES:
        raise PolicyInvalid(
            f"the agent name {_shown(name)} is reserved (Cairn records people by it)"
        )
    rule = policy.agents.get(name, AgentRule())
    if rest == ["extracted"]:
        rule = replace(rule, extracted=mode)
    elif len(rest) == 2 and rest[0] == "kinds":
        _known_kind(target, rest[1], known_kinds)
        rule = replace(rule, kinds={**rule.kinds, rest[1]: mode})
    elif len(rest) == 2 and rest[0] == "scopes":
        scope = _scope(rest[1], target, line=None)
        rule = replace(rule, scopes={**rule.scopes, scope: mode})
    else:
        raise PolicyInvalid(f"unknown policy setting {_shown(target)}")
    return replace(policy, agents={**policy.agents, name: rule})


def without_agent(policy: Policy, name: str) -> Policy:
    return replace(policy, agents={n: r for n, r in policy.agents.items() if n != name})


def without_override(policy: Policy, name: str, rule: str) -> Policy:
    """`policy` without one of an agent's overrides (`kinds.<kind>`, `scopes.<scope>` or
    `extracted`); an agent left with none is dropped. Unknown rules change nothing."""
    current = policy.agents.get(name)
    if current is None:
        return policy
    parts = rule.split(".")
    if parts == ["extracted"]:
        current = replace(current, extracted=None)
    elif len(parts) == 2 and parts[0] == "kinds":
        current = replace(current, kinds={k: m for k, m in current.kinds.items() if k != parts[1]})
    elif len(parts) == 2 and parts[0] == "scopes":
        kept = {s: m for s, m in current.scopes.items() if s.value != parts[1]}
        current = replace(current, scopes=kept)
    if not current.to_dict():
        return without_agent(policy, name)
    return replace(policy, agents={**policy.agents, name: current})
