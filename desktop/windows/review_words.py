"""The review window's words for what core names in English: what a proposal would do (its
operation) and why it waits (a reason code and its detail), in the person's language.

Core writes these as codes and short English phrases; the ones it writes are listed here for
`scripts/translations` (in the review window's context). Whatever is not listed - a phrase core
adds later - is shown as core gives it. Kinds, scopes, scanner rule ids, agent names and memory
ids stay as they are: the Memories and Policy windows, the policy file and `cairn` show the same
names.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QCoreApplication

from desktop.i18n import QT_TRANSLATE_NOOP

CONTEXT = "ReviewWindow"

# core.suggestions.Op: what adopting a proposal would do (a test checks every one is here)
OPS: dict[str, str] = {
    "add": QT_TRANSLATE_NOOP("ReviewWindow", "add"),
    "update": QT_TRANSLATE_NOOP("ReviewWindow", "update"),
    "supersede": QT_TRANSLATE_NOOP("ReviewWindow", "supersede"),
    "forget": QT_TRANSLATE_NOOP("ReviewWindow", "forget"),
    "feedback": QT_TRANSLATE_NOOP("ReviewWindow", "feedback"),
    "identity": QT_TRANSLATE_NOOP("ReviewWindow", "identity"),
}

# The reason codes core gives a waiting proposal (core.governance, core.memory_service,
# core.identity).
REASONS: dict[str, str] = {
    "policy": QT_TRANSLATE_NOOP("ReviewWindow", "policy"),
    "scanner": QT_TRANSLATE_NOOP("ReviewWindow", "scanner"),
    "identity": QT_TRANSLATE_NOOP("ReviewWindow", "identity"),
    "not_owner": QT_TRANSLATE_NOOP("ReviewWindow", "not_owner"),
    "similar": QT_TRANSLATE_NOOP("ReviewWindow", "similar"),
    "mass_forget": QT_TRANSLATE_NOOP("ReviewWindow", "mass_forget"),
    "feedback": QT_TRANSLATE_NOOP("ReviewWindow", "feedback"),
}

# A reason's detail, as core words it in full: the policy's rule (core.policy.Ruling), whose
# memory it is (core.ownership.owner_of), the identity rule, the feedback's verdict.
PHRASES: dict[str, str] = {
    "extracted": QT_TRANSLATE_NOOP("ReviewWindow", "extracted"),
    "ask": QT_TRANSLATE_NOOP("ReviewWindow", "ask"),
    "a person's memory": QT_TRANSLATE_NOOP("ReviewWindow", "a person's memory"),
    "written by Cairn": QT_TRANSLATE_NOOP("ReviewWindow", "written by Cairn"),
    "an agent": QT_TRANSLATE_NOOP("ReviewWindow", "an agent"),
    "identity documents change only with a person's say": QT_TRANSLATE_NOOP(
        "ReviewWindow", "identity documents change only with a person's say"
    ),
    "wrong": QT_TRANSLATE_NOOP("ReviewWindow", "wrong"),
    "stale": QT_TRANSLATE_NOOP("ReviewWindow", "stale"),
}

# Details with a name or a number in them: (reason code, core's wording, the words shown, whose
# {fields} are the wording's groups).
PATTERNS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("policy", re.compile(r"kind:(?P<kind>.+)"), QT_TRANSLATE_NOOP("ReviewWindow", "kind:{kind}")),
    (
        "policy",
        re.compile(r"scope:(?P<scope>.+)"),
        QT_TRANSLATE_NOOP("ReviewWindow", "scope:{scope}"),
    ),
    (
        "not_owner",
        re.compile(r"written by agent (?P<agent>.+)"),
        QT_TRANSLATE_NOOP("ReviewWindow", "written by agent {agent}"),
    ),
    (
        "not_owner",
        re.compile(r"adopted by a person \(proposed by (?P<agent>.+)\)"),
        QT_TRANSLATE_NOOP("ReviewWindow", "adopted by a person (proposed by {agent})"),
    ),
    (
        "mass_forget",
        re.compile(r"(?P<n>\d+) of the (?P<held>\d+) (?P<scope>\S+) memories within an hour"),
        QT_TRANSLATE_NOOP("ReviewWindow", "{n} of the {held} {scope} memories within an hour"),
    ),
)


# How a reason reads with its detail, and how reasons are listed.
WITH_DETAIL = QT_TRANSLATE_NOOP("ReviewWindow", "{} ({})")
BETWEEN_REASONS = QT_TRANSLATE_NOOP("ReviewWindow", ", ")


def said(text: str) -> str:
    """`text` (a source text listed here) in the person's language."""
    return QCoreApplication.translate(CONTEXT, text)


def op_text(op: str) -> str:
    """What a proposal would do, in the person's language."""
    return said(OPS[op]) if op in OPS else op


def reason_code_text(code: str) -> str:
    """A reason code alone (the reason filter offers them), in the person's language."""
    return said(REASONS[code]) if code in REASONS else code


def phrase_text(text: str) -> str:
    """One of core's phrases above in the person's language (any other text as it is)."""
    return said(PHRASES[text]) if text in PHRASES else text


def detail_text(code: str, detail: str) -> str:
    """A reason's detail in the person's language; one core words otherwise, as it is."""
    if detail in PHRASES:
        return phrase_text(detail)
    for pattern_code, pattern, words in PATTERNS:
        found = pattern.fullmatch(detail) if pattern_code == code else None
        if found is not None:
            fields = found.groupdict()
            if fields.get("agent") == "an agent":  # core's words when it knows no agent
                fields["agent"] = phrase_text("an agent")
            return said(words).format(**fields)
    return detail


def reason_text(reason: dict[str, Any]) -> str:
    """One reason a proposal waits: its code and, in brackets, its detail."""
    code = str(reason["code"])
    named = reason_code_text(code)
    detail = reason.get("detail")
    if not detail:
        return named
    return said(WITH_DETAIL).format(named, detail_text(code, str(detail)))


def reasons_text(reasons: list[dict[str, Any]]) -> str:
    """Every reason a proposal waits, in one line."""
    return said(BETWEEN_REASONS).join(reason_text(r) for r in reasons)
