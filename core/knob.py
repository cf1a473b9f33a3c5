"""One setting's declaration (`Knob`: name, type, default, limits, help) and the check of a value
against it; the table of every setting is `core.knobs`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

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
            return (
                None,
                f"must be at least {shown_number(self.minimum)}, got {shown_number(number)}",
            )
        if self.maximum is not None and number > self.maximum:
            return None, f"must be at most {shown_number(self.maximum)}, got {shown_number(number)}"
        if self.least_on is not None and 0 < number < self.least_on:
            least = shown_number(self.least_on)
            return None, f"must be 0 (off) or at least {least}, got {shown_number(number)}"
        return number, None


def _check_bool(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, bool):
        return raw, None
    return None, f"expected true or false, got {shown(raw)}"


def _check_int(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw, None
    return None, f"expected a whole number, got {shown(raw)}"


def _check_float(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        # TOML allows nan and inf; a NaN passes every range check, and either one later broke
        # the services reading the value (a crash at start, a janitor failing every round).
        if not math.isfinite(raw):
            return None, f"expected a finite number, got {_non_finite(raw)}"
        return float(raw), None
    return None, f"expected a number, got {shown(raw)}"


def _non_finite(x: float) -> str:
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _check_str(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, str):
        return raw, None
    return None, f"expected a string, got {shown(raw)}"


def _check_strings(raw: object) -> tuple[Value | None, str | None]:
    if isinstance(raw, list) and all(isinstance(x, str) for x in raw):
        return tuple(raw), None
    return None, f"expected a list of strings, got {shown(raw)}"


_CHECKERS = {
    bool: _check_bool,
    int: _check_int,
    float: _check_float,
    str: _check_str,
    tuple: _check_strings,
}


def shown_number(x: float) -> str:
    # A whole float beyond 2**53 is shown as Python writes floats (1e+300), not as its 301 digits.
    if isinstance(x, float) and x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return str(x)


def _listed(values: Iterable[str]) -> str:
    return ", ".join(repr(v) for v in values)


def shown(raw: object) -> str:
    if isinstance(raw, str):
        return f"the string {raw!r}"
    return f"{type(raw).__name__} {raw!r}"
