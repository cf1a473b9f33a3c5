"""Every setting Cairn reads, declared once as data, and the loader of `settings.toml`.

The table `KNOBS` is the single declaration: the loader validates against it, `docs/settings.md`
is checked against it by a test, and the windows render their settings forms from it.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import ConfigInvalid
from core.model import BUILTIN_KINDS, Tier
from core.toml_text import TextRefused, TooDeep, key_lines, read_text, unreadable
from core.wording import plural

Value = bool | int | float | str | tuple[str, ...]

# The name of a kind of memory (built-in or from `memory.extra_kinds`); writes are checked against
# the kinds, so a name that cannot match this could never be used.
KIND_WORD = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
KIND_WORD_RULE = "a letter, then up to 31 letters, digits, - or _"


@dataclass(frozen=True)
class Knob:
    """One setting: its dotted name (`section.key`), type, default, limits and help text."""

    name: str
    kind: type
    default: Value
    help: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    least_on: float | None = None  # where 0 turns a feature off: the smallest value that is on
    items: tuple[str, ...] = ()  # a list's allowed items (one at least), else any
    words: bool = False  # a string, or each item of a list, is a kind's name (a lowercase word)

    @property
    def section(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def key(self) -> str:
        return self.name.split(".", 1)[1]

    def check(self, raw: object) -> tuple[Value | None, str | None]:
        """Return (value, None) when `raw` is acceptable, else (None, reason)."""
        checker = _CHECKERS.get(self.kind)
        if checker is None:
            raise TypeError(f"knob {self.name} has an unsupported type {self.kind!r}")
        value, reason = checker(raw)
        if reason is not None or value is None:
            return None, reason
        if isinstance(value, int | float) and not isinstance(value, bool):
            return self._ranged(value)
        if self.choices and value not in self.choices:
            return None, f"expected one of {', '.join(self.choices)}, got {value!r}"
        if isinstance(value, str | tuple):
            reason = self._worded(value)
            if reason is not None:
                return None, reason
        return value, None

    def _worded(self, value: str | tuple[str, ...]) -> str | None:
        listed = value if isinstance(value, tuple) else (value,)
        if self.items:
            if not listed:
                return f"expected at least one of {', '.join(self.items)}, got an empty list"
            unknown = [x for x in listed if x not in self.items]
            if unknown:
                return f"expected each of {', '.join(self.items)}, got {_listed(unknown)}"
        bad = [x for x in listed if not KIND_WORD.fullmatch(x)] if self.words else []
        if bad:
            what = "lowercase words" if isinstance(value, tuple) else "a lowercase word"
            return f"expected {what} ({KIND_WORD_RULE}), got {_listed(bad)}"
        return None

    def _ranged(self, number: float) -> tuple[Value | None, str | None]:
        if self.minimum is not None and number < self.minimum:
            return None, f"must be at least {_num(self.minimum)}, got {_num(number)}"
        if self.maximum is not None and number > self.maximum:
            return None, f"must be at most {_num(self.maximum)}, got {_num(number)}"
        if self.least_on is not None and 0 < number < self.least_on:
            least = _num(self.least_on)
            return None, f"must be 0 (off) or at least {least}, got {_num(number)}"
        return number, None


def _check_bool(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, bool):
        return raw, None
    return None, f"expected true or false, got {_shown(raw)}"


def _check_int(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw, None
    return None, f"expected a whole number, got {_shown(raw)}"


def _check_float(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        # TOML allows nan and inf; a NaN passes every range check, and either one later broke
        # the services reading the value (a crash at start, a janitor failing every round).
        if not math.isfinite(raw):
            return None, f"expected a finite number, got {_non_finite(raw)}"
        return float(raw), None
    return None, f"expected a number, got {_shown(raw)}"


def _non_finite(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _check_str(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, str):
        return raw, None
    return None, f"expected a string, got {_shown(raw)}"


def _check_strings(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        return tuple(raw), None
    return None, f"expected a list of strings, got {_shown(raw)}"


_CHECKERS = {
    bool: _check_bool,
    int: _check_int,
    float: _check_float,
    str: _check_str,
    tuple: _check_strings,
}


def _num(x: float) -> str:
    # A whole float beyond 2**53 is shown as Python writes floats (1e+300), not as its 301 digits.
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return str(x)


def _listed(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in values)


def _shown(raw: object) -> str:
    if isinstance(raw, str):
        return f"the string {raw!r}"
    return f"{type(raw).__name__} {raw!r}"


KNOBS: tuple[Knob, ...] = (
    Knob(
        "store.synchronous",
        str,
        "NORMAL",
        "SQLite durability. NORMAL (with WAL) survives a killed or crashed Cairn without losing an "
        "acknowledged write; an OS crash or power loss may roll back the last commits. FULL also "
        "survives power loss and is several times slower on writes.",
        choices=("NORMAL", "FULL"),
    ),
    Knob(
        "store.busy_timeout_ms",
        int,
        5000,
        "How long a database connection waits for a lock before reporting the store busy.",
        minimum=0,
        maximum=600_000,
    ),
    Knob(
        "store.quick_check_on_open",
        bool,
        True,
        "Run SQLite's quick_check when the store opens, and refuse to start on a damaged file.",
    ),
    Knob(
        "limits.max_content_bytes",
        int,
        32768,
        "Largest memory content accepted, in UTF-8 bytes. Larger writes are refused, never cut.",
        minimum=256,
        maximum=1_000_000,
    ),
    Knob(
        "limits.max_summary_bytes",
        int,
        1024,
        "Largest summary accepted, in UTF-8 bytes.",
        minimum=32,
        maximum=65536,
    ),
    Knob(
        "limits.max_keywords_bytes",
        int,
        2048,
        "Largest `keywords` enrichment text accepted, in UTF-8 bytes.",
        minimum=32,
        maximum=65536,
    ),
    Knob("limits.max_tags", int, 16, "Most tags one memory may carry.", minimum=0, maximum=256),
    Knob(
        "limits.max_tag_chars",
        int,
        48,
        "Longest tag accepted, in characters.",
        minimum=1,
        maximum=256,
    ),
    Knob(
        "limits.max_source_chars",
        int,
        512,
        "Longest free-form provenance `source` string accepted, in characters.",
        minimum=16,
        maximum=4096,
    ),
    Knob(
        "memory.extra_kinds",
        tuple,
        (),
        "Kinds of memory to accept beyond the built-in ones (fact, preference, convention, "
        "procedure, pitfall, correction, insight, idea). Lowercase words.",
        words=True,
    ),
    Knob(
        "search.agents_may_broaden",
        bool,
        False,
        "Let agent connections search every workspace when they ask explicitly (horizon 'all'). "
        "Off: an agent only ever sees its own workspace, user and global memories.",
    ),
    Knob(
        "context.max_bytes",
        int,
        8192,
        "Default byte budget of a context bundle when the caller gives none.",
        minimum=256,
        maximum=1_000_000,
    ),
    Knob(
        "context.tiers",
        tuple,
        ("human", "explicit"),
        "Author tiers a context bundle takes by default (human, explicit, derived, llm).",
        items=tuple(t.value for t in Tier),
    ),
    Knob(
        "server.max_frame_bytes",
        int,
        1_048_576,
        "Largest request frame (one line of JSON) accepted, in bytes; a larger one is answered "
        "with an error and the connection closed.",
        minimum=4096,
        maximum=64 * 1_048_576,
    ),
    Knob(
        "server.frame_timeout_s",
        float,
        10.0,
        "Seconds a client has to finish a frame it started, and to take any of its answers "
        "once its socket is full; a slower one is disconnected.",
        minimum=0.5,
        maximum=600,
    ),
    Knob(
        "server.idle_timeout_s",
        float,
        900.0,
        "Seconds a connection may stay silent before it is closed.",
        minimum=1,
        maximum=86400,
    ),
    Knob(
        "server.hello_timeout_s",
        float,
        5.0,
        "Seconds a new connection has to send its hello (with its token on TCP).",
        minimum=0.5,
        maximum=120,
    ),
    Knob(
        "server.max_connections",
        int,
        64,
        "Most connections served at once; more are refused with an error.",
        minimum=1,
        maximum=4096,
    ),
    Knob(
        "server.max_tcp_unauthenticated",
        int,
        16,
        "Most loopback TCP connections waiting for their hello at once; more are refused. They "
        "do not count against server.max_connections, so they never take the Unix socket's.",
        minimum=1,
        maximum=4096,
    ),
    Knob(
        "server.max_in_flight",
        int,
        16,
        "Most requests one connection may have in flight; more are refused (rate_limited).",
        minimum=1,
        maximum=1024,
    ),
    Knob(
        "server.max_push_backlog_bytes",
        int,
        8 * 1024 * 1024,
        "Most bytes of pushed `changes` a subscriber may leave unread; past it the connection is "
        "unsubscribed and told where to catch up from with changes.since.",
        minimum=64 * 1024,
        maximum=1024 * 1024 * 1024,
    ),
    Knob(
        "server.workers",
        int,
        8,
        "Threads that run service calls for the socket server.",
        minimum=1,
        maximum=64,
    ),
    Knob(
        "server.search_workers",
        int,
        1,
        "Threads that run searches and context bundles. Search scoring is CPU-bound Python, so "
        "on CPython extra threads mostly contend for the interpreter lock: on 2 CPUs, 8 threads "
        "served fewer searches per second than 1 (see docs/performance.md).",
        minimum=1,
        maximum=16,
    ),
    Knob(
        "server.tcp_port",
        int,
        0,
        "Also listen on loopback TCP (127.0.0.1 and ::1) at this port, with tokens required; 0 "
        "is off. Never binds another address.",
        minimum=0,
        maximum=65535,
    ),
    Knob(
        "security.require_tokens",
        bool,
        False,
        "Refuse agent connections on the Unix socket that present no token. TCP always "
        "requires one.",
    ),
    Knob(
        "security.confirm_terminals_in_tray",
        bool,
        False,
        "While the tray runs, ask in the tray about every person's command, also those typed "
        "at a terminal (a program that fakes a terminal then still needs your click).",
    ),
    Knob(
        "review.max_items",
        int,
        200,
        "Proposals the review queue holds. Beyond this the least-seen, longest-unseen go; each "
        "eviction is recorded and counted in health, never silent.",
        minimum=10,
        maximum=100_000,
    ),
    Knob(
        "audit.max_events",
        int,
        200_000,
        "Audit events kept in the database. Past this, the oldest are rotated into JSON-lines "
        "files under the state directory (the export format) until 90% remain, so a store "
        "nobody writes to makes no new files - never dropped.",
        minimum=1000,
        maximum=100_000_000,
    ),
    Knob(
        "lifecycle.expired_retention_days",
        float,
        7.0,
        "Days an expired memory is kept (hidden, shown on request) before it is purged.",
        minimum=0,
        maximum=3650,
    ),
    Knob(
        "lifecycle.archive_unused_days",
        float,
        180.0,
        "Days a project memory may go unused (not recalled, not changed) before the janitor "
        "archives it; 0 turns this off. Pinned memories are never archived, and importance 4 "
        "and 5 get twice as long. Archived memories stay searchable on request; nothing is "
        "deleted.",
        minimum=0,
        maximum=36_500,
    ),
    Knob(
        "lifecycle.session_retention_days",
        float,
        7.0,
        "Days after a session was last seen before its session-scope memories expire (and, "
        "after lifecycle.expired_retention_days, are purged); 0 turns this off.",
        minimum=0,
        maximum=3_650,
    ),
    Knob(
        "backup.interval_hours",
        float,
        24.0,
        "Hours between automatic online backups while Cairn runs; 0 turns them off. A backup is "
        "also taken before any schema migration.",
        minimum=0,
        maximum=8_760,
        least_on=0.01,  # 36 s; the Settings window shows hundredths, so less would read "Off"
    ),
    Knob(
        "backup.keep_daily",
        int,
        7,
        "Daily backups kept (the newest of each day).",
        minimum=1,
        maximum=366,
    ),
    Knob(
        "backup.keep_weekly",
        int,
        4,
        "Weekly backups kept beyond the daily ones (the newest of each ISO week).",
        minimum=0,
        maximum=520,
    ),
    Knob(
        "identity.max_bytes",
        int,
        8_192,
        "Largest identity document version accepted, in UTF-8 bytes (each document is injected "
        "into agents' prompts, so it stays small).",
        minimum=256,
        maximum=65_536,
    ),
    Knob(
        "notes.folder",
        str,
        "",
        "A folder of your markdown notes to keep as memories (each file one human memory, "
        "updated when the file changes, archived when it is deleted); empty turns it off.",
    ),
    Knob(
        "notes.kind",
        str,
        "fact",
        "Kind of a note's memory when its front matter names none.",  # one Cairn takes: `_across`
    ),
    Knob(
        "notes.scope",
        str,
        "user",
        "Scope of a note's memory when its front matter names none (global or user).",
        choices=("global", "user"),
    ),
    Knob(
        "usage.flush_interval_ms",
        int,
        2000,
        "How often recall counts and last-recalled times are written, in one batch, off the "
        "request path.",
        minimum=50,
        maximum=600_000,
    ),
    Knob(
        "idempotency.retention_hours",
        float,
        168.0,
        "How long a write's idempotency key is remembered, so a retry returns the first result.",
        minimum=1,
        maximum=24 * 365,
    ),
)

KNOB_BY_NAME: dict[str, Knob] = {k.name: k for k in KNOBS}


class Settings:
    """Validated setting values, read by name. Construct with `load_settings` or `defaults`."""

    def __init__(self, values: Mapping[str, Value], source: Path | None = None) -> None:
        self._values = {k.name: values.get(k.name, k.default) for k in KNOBS}
        self.source = source

    @classmethod
    def defaults(cls) -> Settings:
        return cls({})

    def with_values(self, **overrides: Value) -> Settings:
        """A copy with some values replaced; names use `__` for the dot (`store__synchronous`)."""
        values = dict(self._values)
        for raw_name, value in overrides.items():
            name = raw_name.replace("__", ".")
            knob = KNOB_BY_NAME.get(name)
            if knob is None:
                raise KeyError(name)
            checked, reason = knob.check(list(value) if isinstance(value, tuple) else value)
            if reason is not None:
                raise ConfigInvalid(f"{name}: {reason}", data={"problems": [f"{name}: {reason}"]})
            assert checked is not None
            values[name] = checked
        problems = _across(values)
        if problems:
            raise ConfigInvalid("; ".join(problems), data={"problems": problems})
        return Settings(values, self.source)

    def value(self, name: str) -> Value:
        return self._values[name]

    def integer(self, name: str) -> int:
        v = self._values[name]
        assert isinstance(v, int)
        assert not isinstance(v, bool)
        return v

    def number(self, name: str) -> float:
        v = self._values[name]
        assert isinstance(v, float)
        return v

    def text(self, name: str) -> str:
        v = self._values[name]
        assert isinstance(v, str)
        return v

    def flag(self, name: str) -> bool:
        v = self._values[name]
        assert isinstance(v, bool)
        return v

    def strings(self, name: str) -> tuple[str, ...]:
        v = self._values[name]
        assert isinstance(v, tuple)
        return v

    def as_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self._values.items()}


def validate_document(doc: Mapping[str, Any]) -> tuple[dict[str, Value], list[str]]:
    """Check a parsed settings document; return the accepted values and every problem found."""
    values: dict[str, Value] = {}
    problems: list[str] = []
    sections = {k.section for k in KNOBS}
    for section, body in doc.items():
        if section not in sections:
            problems.append(f"[{section}]: unknown section (known: {', '.join(sorted(sections))})")
            continue
        if not isinstance(body, Mapping):
            problems.append(f"{section}: expected a [{section}] table, got {_shown(body)}")
            continue
        for key, raw in body.items():
            name = f"{section}.{key}"
            knob = KNOB_BY_NAME.get(name)
            if knob is None:
                problems.append(f"{name}: unknown setting")
                continue
            value, reason = knob.check(raw)
            if reason is not None:
                problems.append(f"{name}: {reason}")
            else:
                assert value is not None
                values[name] = value
    problems.extend(_across(values))
    return values, problems


def _across(values: Mapping[str, Value]) -> list[str]:
    """Problems between settings, each named after the setting that cannot be used."""
    problems = []
    kind = values.get("notes.kind")
    if isinstance(kind, str):
        extra = values.get("memory.extra_kinds", ())
        known = BUILTIN_KINDS + (extra if isinstance(extra, tuple) else ())
        if kind.lower() not in known:  # in any case, as a note's own `kind: Fact`
            problems.append(
                f"notes.kind: expected a built-in kind ({', '.join(BUILTIN_KINDS)}) or one in "
                f"memory.extra_kinds, got {kind!r}"
            )
    return problems


def read_settings_text(path: Path) -> str:
    """The text of `settings.toml`, without the byte order mark some editors (Windows Notepad)
    put at the start: TOML has no place for it, and the parser's "Invalid statement (at line 1,
    column 1)" did not say what was there.

    Raises:
        TooDeep: the text nests past what a person writes (until 2026-12-01 a dotted key
            50,000 levels deep took the start 95 s, arrays 3,000 deep a traceback).
        TextRefused: the path leads to no regular file (a FIFO: until 2026-12-01 the start
            waited on it for good), or the file is over 1 MiB (`core.toml_text`).
        OSError, UnicodeDecodeError: it cannot be read, or is not UTF-8.
    """
    text = read_text(path)
    key_lines(text)  # refuses nesting past reason
    return text


def load_settings(path: Path) -> Settings:
    """Read `settings.toml`; a missing file means defaults.

    Raises:
        ConfigInvalid: the file is not valid TOML, or names an unknown setting, or gives a value of
            the wrong type or out of range. Every problem is listed, each with its key and reason.
    """
    try:
        text = read_settings_text(path)
    except FileNotFoundError:
        return Settings({}, path)
    except TooDeep as e:
        raise ConfigInvalid(
            f"settings file {path}, line {e.line}: {e.reason}",
            data={"path": str(path), "problems": [f"line {e.line}: {e.reason}"]},
        ) from e
    except TextRefused as e:
        raise ConfigInvalid(f"settings file {path} {e}", data={"path": str(path)}) from e
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigInvalid(
            f"cannot read settings file {path}: {unreadable(e, path)}", data={"path": str(path)}
        ) from e
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigInvalid(
            f"settings file {path} is not valid TOML: {e}",
            data={"path": str(path), "problems": [str(e)]},
        ) from e
    values, problems = validate_document(doc)
    if problems:
        listing = "; ".join(problems)
        raise ConfigInvalid(
            f"settings file {path} has {plural(len(problems), 'problem')}: {listing}",
            data={"path": str(path), "problems": problems},
        )
    return Settings(values, path)


def documented_names(markdown: str) -> set[str]:
    """The setting names a markdown document mentions in backticks (used by the docs test)."""
    return {k.name for k in KNOBS if f"`{k.name}`" in markdown}


def render_reference(knobs: Iterable[Knob] = KNOBS) -> str:
    """A markdown table of every setting, for `docs/settings.md`."""
    lines = ["| setting | type | default | meaning |", "|---|---|---|---|"]
    for k in knobs:
        kind = {bool: "bool", int: "integer", float: "number", str: "string", tuple: "list"}[k.kind]
        if k.choices:
            kind += " (" + " / ".join(k.choices) + ")"
        default = k.default
        if isinstance(default, bool):
            shown = "true" if default else "false"
        elif isinstance(default, tuple):
            shown = "[" + ", ".join(f'"{x}"' for x in default) + "]"
        elif isinstance(default, str):
            shown = f'"{default}"'
        else:
            shown = _num(float(default)) if isinstance(default, float) else str(default)
        lines.append(f"| `{k.name}` | {kind} | `{shown}` | {k.help} |")
    return "\n".join(lines) + "\n"
