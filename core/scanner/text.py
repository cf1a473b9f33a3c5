"""The text the scanner's patterns see: each character folded (NFKC, look-alikes, hidden
characters dropped), the map back to the original, and the hidden characters themselves."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

# -- folding: the text the patterns see, the map back to the original, hidden characters -------

_BIDI = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))
_INVISIBLE = frozenset(range(0x200B, 0x2010)) | frozenset(range(0x2060, 0x2065)) | {0xFEFF}
# Dropped for matching but not reported: format and filler characters that hide inside words.
_SILENT = frozenset(
    [
        *(0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0),
        *range(0x180B, 0x1810),
        *range(0x206A, 0x2070),
        *range(0xFE00, 0xFE10),
        *range(0xE0100, 0xE01F0),
    ]
)
_CONFUSABLE = dict(
    zip(
        "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХУІЈЅαοικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "aeopcyxijsdqwhlABEKMHOPCTXYIJSaoikvptuxABEZHIKMNOPTYX",
        strict=True,
    )
)
# BMP characters that never need folding: most of any text. ASCII, CJK ideographs, kana, hangul
# and CJK punctuation are NFKC-stable (test_scanner checks this list). Full-width punctuation is
# not, and is folded: the patterns need `＿ － ： ／ ＠ ．` as ASCII (until 2026-11-30 it was kept
# here, and `ghp＿...` was no secret).
SAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x007F),
    (0x2010, 0x2010),
    (0x2013, 0x2016),
    (0x2018, 0x2023),
    (0x2027, 0x2027),
    (0x3001, 0x3011),
    (0x3014, 0x301F),
    (0x3041, 0x3096),
    (0x30A1, 0x30FA),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
)


def _complement_class(ranges: Sequence[tuple[int, int]], top: int) -> str:
    """A positive character class of everything up to `top` outside `ranges`: the engine skips
    through a positive all-BMP class with a bitmap, through a negated one char by char."""
    out, nxt = [], 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append(f"\\u{nxt:04x}-\\u{lo - 1:04x}")
        nxt = hi + 1
    if nxt <= top:
        out.append(f"\\u{nxt:04x}-\\u{top:04x}")
    return "[" + "".join(out) + "]+"


_FOLD_RUN_BMP = re.compile("(" + _complement_class(SAFE_RANGES, 0xFFFF) + ")")
# Astral characters only occur in four-byte strings, which get this slower class instead.
_FOLD_RUN_ANY = re.compile(
    "(" + _complement_class(SAFE_RANGES, 0xFFFF)[:-2] + "\U00010000-\U0010ffff]+)"
)
_FOLD_ANY = re.compile(
    "[\u0370-\u052f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    cp = ord(ch)
    if cp in _BIDI or cp in _INVISIBLE or cp in _SILENT:
        return ""
    if 0xE0000 <= cp <= 0xE007F:
        # Tag characters spell ASCII a model can read and a person cannot see.
        return chr(cp - 0xE0000) if 0xE0020 <= cp <= 0xE007E else ""
    if ch in _CONFUSABLE:
        return _CONFUSABLE[ch]
    folded = unicodedata.normalize("NFKC", ch)
    return "".join(c for c in folded if ord(c) not in _SILENT)


def _is_hidden(cp: int) -> bool:
    """A character people cannot see that the scanner reports (not merely drops)."""
    return cp in _BIDI or cp in _INVISIBLE or 0xE0000 <= cp <= 0xE007F


_Folded = tuple[str, tuple[tuple[int, int, int], ...], bool]


def _fold_run(run: str) -> _Folded:
    """A run of characters that may need folding: its folded text, the characters that did not
    fold one to one (offset in the run, folded length, how many in a row), and whether it holds
    a hidden character. Short runs (most are one character) repeat, so they are cached; long
    ones would only fill the cache."""
    return _fold_short_run(run) if len(run) <= 64 else _fold_any_run(run)


def _fold_any_run(run: str) -> _Folded:
    if unicodedata.is_normalized("NFKC", run) and not _FOLD_ANY.search(run):
        return run, (), False
    parts = list(map(_fold_char, run))
    odd: list[tuple[int, int, int]] = []
    for i, folded in enumerate(parts):
        size = len(folded)
        if size == 1:
            continue
        if size == 0 and odd and odd[-1][1] == 0 and odd[-1][0] + odd[-1][2] == i:
            odd[-1] = (odd[-1][0], 0, odd[-1][2] + 1)  # dropped characters in a row: one entry
        else:
            odd.append((i, size, 1))
    hidden = any(_is_hidden(ord(ch)) for ch in set(run))
    return "".join(parts), tuple(odd), hidden


_fold_short_run = lru_cache(maxsize=4096)(_fold_any_run)


@dataclass(frozen=True, slots=True, eq=False)
class _Text:
    """The folded text (`norm`), the same lower-cased (`low`, equally long), and the map back:
    piece i starts at `starts[i]` in norm and `origins[i]` in the original; `linear[i]` says
    whether it maps char for char or is one original character that folded into several.
    `hidden` holds the spans of the original text that contain hidden characters; `seen` lets a
    check remember how far it has already looked, so overlapping candidates cost no more work."""

    norm: str
    low: str
    starts: list[int]
    origins: list[int]
    linear: list[bool]
    hidden: list[tuple[int, int]]
    seen: dict[str, int]

    def origin(self, pos: int) -> int:
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.origins[i] + (pos - self.starts[i] if self.linear[i] else 0)

    def span(self, start: int, end: int) -> tuple[int, int]:
        return self.origin(start), self.origin(end - 1) + 1


class _MapBuilder:
    """Builds the piece lists of `_Text` while folded text is appended."""

    def __init__(self) -> None:
        self.starts, self.origins, self.linear = [0], [0], [True]
        self.npos = 0  # length of the folded text so far
        self.broken = False  # the next 1:1 character needs a new linear piece

    def one_to_one(self, orig: int, n: int) -> None:
        if n and self.broken:
            self.starts.append(self.npos)
            self.origins.append(orig)
            self.linear.append(True)
            self.broken = False
        self.npos += n

    def odd(self, orig: int, size: int) -> None:
        """One original character that folded to `size` (0, or 2 and more) characters."""
        if size:
            self.starts.append(self.npos)
            self.origins.append(orig)
            self.linear.append(False)
            self.npos += size
        self.broken = True


def _fold(text: str) -> _Text:
    if text.isascii():
        return _Text(text, text.lower(), [0], [0], [True], [], {})
    # Astral characters exist only in four-byte strings; UTF-16 is longer for those alone.
    astral = len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)
    pieces = (_FOLD_RUN_ANY if astral else _FOLD_RUN_BMP).split(text)
    parts: list[str] = []
    hidden: list[tuple[int, int]] = []
    build = _MapBuilder()
    pos = 0
    for k, piece in enumerate(pieces):
        n = len(piece)
        if k % 2 == 0:  # characters that never fold
            parts.append(piece)
            build.one_to_one(pos, n)
        else:
            folded, odd, hid = _fold_run(piece)
            parts.append(folded)
            if hid:
                hidden.append((pos, pos + n))
            at = 0  # offset in the run
            for i, size, count in odd:
                if i > at:
                    build.one_to_one(pos + at, i - at)
                build.odd(pos + i, size)
                at = i + count
            if at < n:
                build.one_to_one(pos + at, n - at)
        pos += n
    norm = "".join(parts)
    low = norm.lower()
    if len(low) != len(norm):  # a few letters (İ) lower-case to two characters
        low = "".join(c.lower()[0] for c in norm)
    return _Text(norm, low, build.starts, build.origins, build.linear, hidden, {})


def _emojiish(ch: str) -> bool:
    cp = ord(ch)
    return cp >= 0x1F000 or 0x2190 <= cp <= 0x2BFF or cp in (0xFE0F, 0x20E3)


def _joined(text: str, i: int) -> bool:
    """A ZWJ / ZWNJ with a legitimate use: inside an emoji sequence, or between two letters of
    Arabic, Persian or an Indic script, which join or part letters with it."""
    if not 0 < i < len(text) - 1:
        return False
    before, after = text[i - 1], text[i + 1]
    if _emojiish(before) and _emojiish(after):
        return True
    return 0x0600 <= ord(before) <= 0x0DFF and 0x0600 <= ord(after) <= 0x0DFF


_HIDDEN_GAP = 16  # hidden characters of one kind this close together are one finding
_H_BIDI = "\u202a-\u202e\u2066-\u2069"
_H_INVISIBLE = "\u200b-\u200f\u2060-\u2064\ufeff"
_H_TAG = "\U000e0000-\U000e007f"
_HIDDEN_SPAN = {
    rule: re.compile(f"[{chars}](?:[^{chars}]{{0,{_HIDDEN_GAP}}}[{chars}])*+")
    for rule, chars in (
        ("bidi-control", _H_BIDI),
        ("invisible-char", _H_INVISIBLE),
        ("tag-char", _H_TAG),
    )
}
_NOT_JOINER = re.compile("[\u200b\u200e\u200f\u2060-\u2064\ufeff]")
_TAG_FLAG = re.compile("\U0001f3f4([\U000e0020-\U000e007e]{1,16})\U000e007f")


def _legitimate(rule: str, text: str, s: int, e: int) -> bool:
    """Hidden characters with a use: ZWJ in emoji and joining scripts, tags in region flags."""
    if rule == "invisible-char" and _NOT_JOINER.search(text, s, e) is None:
        return all(_joined(text, i) for i in range(s, e) if text[i] in "\u200c\u200d")
    if rule == "tag-char" and "\U0001f3f4" in text[max(0, s - 1) : e]:
        # Every tag must belong to a flag like 🏴 + "gbsct" + cancel tag (Scotland).
        flags = sum(m.end() - m.start() - 1 for m in _TAG_FLAG.finditer(text, max(0, s - 1), e))
        tags = sum(1 for ch in text[s:e] if 0xE0000 <= ord(ch) <= 0xE007F)
        return flags == tags
    return False


def _hygiene(text: str, regions: list[tuple[int, int]]) -> Iterator[tuple[str, int, int]]:
    """Hidden characters worth reporting: (rule, start, end) in the original text, one finding
    for characters of one kind at most _HIDDEN_GAP apart ("ig\u200bn\u200bore" is one)."""
    merged: list[list[int]] = []
    for s, e in regions:
        if merged and s - merged[-1][1] <= _HIDDEN_GAP:
            merged[-1][1] = e
        else:
            merged.append([s, e])
    for start, end in merged:
        first = 1 if start == 0 and text[0] == "\ufeff" else start  # skip a byte-order mark
        for rule, pattern in _HIDDEN_SPAN.items():
            for m in pattern.finditer(text, first, end):
                if not _legitimate(rule, text, *m.span()):
                    yield rule, m.start(), m.end()
