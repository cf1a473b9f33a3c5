"""Word-level differences between two texts, and the same rendered as coloured HTML for a
read-only text browser (what was removed struck through in red, what was added in green)."""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from enum import StrEnum

# A word, a run of whitespace, or one other character: whitespace is kept as its own token so
# that joining the tokens gives the text back exactly.
_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)

DELETED_STYLE = "background-color:#fbd3d0;color:#8a1c12;text-decoration:line-through;"
INSERTED_STYLE = "background-color:#cdeccd;color:#145a14;"


class Change(StrEnum):
    EQUAL = "equal"
    DELETE = "delete"
    INSERT = "insert"


@dataclass(frozen=True)
class Piece:
    """A run of text that is the same in both, only in the old, or only in the new."""

    change: Change
    text: str


def tokens(text: str) -> list[str]:
    """Split `text` into words, whitespace runs and single punctuation marks."""
    return _TOKEN.findall(text)


def word_diff(old: str, new: str) -> list[Piece]:
    """The pieces that turn `old` into `new`, word by word. Joining the EQUAL and DELETE pieces
    gives `old`; joining the EQUAL and INSERT pieces gives `new`.

    A short shared run between two changes is folded into them (see `_fold`), so a rewritten
    sentence reads as one removal and one addition instead of words interleaved around every
    shared space."""
    a, b = tokens(old), tokens(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    # Each group is either ("=", text, "") or ("~", removed, added).
    groups: list[tuple[str, str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            groups.append(("=", "".join(a[i1:i2]), ""))
        else:
            groups.append(("~", "".join(a[i1:i2]), "".join(b[j1:j2])))
    folded = _fold(groups)
    while len(folded) < len(groups):  # folding can make the next fold possible
        groups, folded = folded, _fold(folded)
    out: list[Piece] = []
    for tag, first, second in folded:
        if tag == "=":
            out.append(Piece(Change.EQUAL, first))
            continue
        if first:
            out.append(Piece(Change.DELETE, first))
        if second:
            out.append(Piece(Change.INSERT, second))
    return out


def _fold(groups: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Fold each shared run that is no longer than the changes on both sides of it into them
    (the rule of diff-match-patch's semantic cleanup): two unrelated sentences that share a
    space, a comma or a word "in" read as one removal and one addition."""
    folded: list[tuple[str, str, str]] = []
    for n, (tag, first, second) in enumerate(groups):
        after = groups[n + 1] if n + 1 < len(groups) else None
        before = folded[-1] if folded else None
        small = (
            tag == "="
            and before is not None
            and after is not None
            and before[0] == "~"
            and after[0] == "~"
            and len(first) <= max(len(before[1]), len(before[2]))
            and len(first) <= max(len(after[1]), len(after[2]))
        )
        # A folded run becomes part of the change: the same text removed and added again.
        kind, removed, added = ("~", first, first) if small else (tag, first, second)
        if kind == "~" and folded and folded[-1][0] == "~":
            _, removed_before, added_before = folded.pop()
            removed, added = removed_before + removed, added_before + added
        folded.append((kind, removed, added))
    return folded


def _escaped(text: str) -> str:
    return html.escape(text).replace("\n", "<br/>")


def diff_html(old: str, new: str) -> str:
    """`word_diff` as an HTML fragment for a QTextBrowser: deletions red and struck through,
    insertions green; whitespace and line breaks kept."""
    spans: list[str] = []
    for piece in word_diff(old, new):
        text = _escaped(piece.text)
        if piece.change is Change.DELETE:
            spans.append(f'<span style="{DELETED_STYLE}">{text}</span>')
        elif piece.change is Change.INSERT:
            spans.append(f'<span style="{INSERTED_STYLE}">{text}</span>')
        else:
            spans.append(text)
    return f'<p style="white-space:pre-wrap">{"".join(spans)}</p>'


def plain_html(text: str) -> str:
    """Text with no counterpart, as the same kind of HTML fragment (nothing coloured)."""
    return f'<p style="white-space:pre-wrap">{_escaped(text)}</p>'


def counts(pieces: list[Piece]) -> tuple[int, int]:
    """How many words were removed and added (whitespace and punctuation not counted)."""
    removed = sum(len(re.findall(r"\w+", p.text)) for p in pieces if p.change is Change.DELETE)
    added = sum(len(re.findall(r"\w+", p.text)) for p in pieces if p.change is Change.INSERT)
    return removed, added
