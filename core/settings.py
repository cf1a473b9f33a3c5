"""The settings Cairn runs with: the values of `settings.toml`, read and checked against the
declared settings (`core.knobs`), then read by name (`Settings`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import ConfigInvalid
from core.knob import Value, shown
from core.knobs import KNOB_BY_NAME, KNOBS
from core.model import BUILTIN_KINDS
from core.toml_text import TextRefused, TooDeep, key_lines, read_text, unreadable
from core.wording import plural


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
            problems.append(f"{section}: expected a [{section}] table, got {shown(body)}")
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
