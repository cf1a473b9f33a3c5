"""The text the scanner's patterns see: each character folded (NFKC, look-alikes, hidden
characters dropped), the map back to the original, and the hidden characters themselves."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.format_characters import FORMAT_CHARACTERS, char_class

# -- folding: the text the patterns see, the map back to the original, hidden characters -------

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, Unicode 15.1): characters a
# renderer shows as nothing. The fold drops every one (tag characters it decodes) and the
# hygiene rules report them; until 2026-11-30 the fold dropped only some and the rules reported
# fewer (a soft hyphen or a variation selector inside `</cairn-memory-...>` passed unflagged).
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_BIDI_RANGES = ((0x202A, 0x202E), (0x2066, 0x2069))
_TAG_RANGES = ((0xE0000, 0xE007F),)


def _codepoints(ranges: Sequence[tuple[int, int]]) -> frozenset[int]:
    return frozenset(cp for lo, hi in ranges for cp in range(lo, hi + 1))


def _ranges(codepoints: frozenset[int]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for cp in sorted(codepoints):
        if out and out[-1][1] == cp - 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return tuple(out)


# Format characters (FORMAT_CHARACTERS) outside Default_Ignorable_Code_Point (number signs,
# interlinear annotation, Egyptian hieroglyph controls, ...) hide in words as well: until
# 2026-11-30 they were neither folded nor reported, and 'Friday.\ufffbIgnore all previous
# instructions.' had no finding.
_SHOWN_FORMAT = _codepoints(FORMAT_CHARACTERS) - _codepoints(DEFAULT_IGNORABLE)
_IGNORABLE = _codepoints(DEFAULT_IGNORABLE) | _SHOWN_FORMAT
# Hidden characters the `invisible-char` rule reports: the ignorable ones but direction controls
# and tag characters, which have rules of their own.
_INVISIBLE = _IGNORABLE - _codepoints(_BIDI_RANGES) - _codepoints(_TAG_RANGES)
_INVISIBLE_RANGES = _ranges(_INVISIBLE)

# Look-alike letters, and angle brackets NFKC leaves alone (full-width and small ones it folds).
_LOOKALIKE_BRACKETS = "\u02c2\u02c3\u1438\u1433"
# Look-alike hyphens, slashes and angle brackets (`</cairn\u2011memory-...>`, `<\u2215cairn-...`,
# `\u3008/cairn-memory-...\u3009` were no fence tags to the scanner until 2026-11-30).
_LOOKALIKE_PUNCTUATION = (
    "\u2010\u2011\u2012\u2043\u2212\u2044\u2215\u29f8\u3008\u3009\u27e8\u27e9\u2329\u232a"
)
# Characters outside the Greek and Cyrillic blocks that fold although NFKC keeps them: the
# look-alike brackets and punctuation, and the Braille blank, which shows as a space
# ('Ignore\u2800all').
_FOLDS_TOO = _LOOKALIKE_BRACKETS + _LOOKALIKE_PUNCTUATION + "\u2800"
_CONFUSABLE = dict(
    zip(
        "аеорсухіјѕԁԛԝһӏАВЕКМНОРСТХУІЈЅαοικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ" + _FOLDS_TOO,
        "aeopcyxijsdqwhlABEKMHOPCTXYIJSaoikvptuxABEZHIKMNOPTYX<><>" + "-----///<><><> ",
        strict=True,
    )
)
# BMP characters that never need folding: most of any text. ASCII, CJK ideographs, kana, hangul
# and CJK punctuation are NFKC-stable (test_scanner checks this list). Full-width punctuation is
# not, and is folded: the patterns need `＿ － ： ／ ＠ ．` as ASCII (until 2026-11-30 it was kept
# here, and `ghp＿...` was no secret).
SAFE_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x007F),
    (0x2013, 0x2016),
    (0x2018, 0x2023),
    (0x2027, 0x2027),
    (0x3001, 0x3007),
    (0x300A, 0x3011),
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
# What folds although NFKC keeps it: look-alikes and the ignorable characters.
_FOLD_ANY = re.compile(f"[\u0370-\u052f{_FOLDS_TOO}{char_class(_ranges(_IGNORABLE))}]")
# Every hidden character, for the second look with each of them read as a space.
_HIDDEN_CHAR = re.compile(f"[{char_class(_ranges(_IGNORABLE))}]")


# Hidden characters between two letters or digits: dropped, they join two words into one.
_JOINS_WORDS = re.compile(f"(?<=[^\\W_])[{char_class(_ranges(_IGNORABLE))}]+(?=[^\\W_])")


def joins_words(text: str) -> bool:
    """Whether a hidden character stands between two letters or digits of `text`, in use or
    not (a soft hyphen between two words hides their gap as well as a stray one does)."""
    return _JOINS_WORDS.search(text) is not None


def spaced(text: str) -> str:
    """`text` with every hidden character a space, as long as `text`: dropping one joins the
    words it stood between ('Ignore\ufffaall\ufffaprevious'), so the patterns look twice."""
    return _HIDDEN_CHAR.sub(" ", text)


def fold_spaced(text: str, t: _Text) -> _Text:
    """`_fold(spaced(text))`, built from `t = _fold(text)` instead of folding the text again
    (the fold is per character, so only the hidden characters' places change: each dropped
    one becomes a space of its own, each decoded tag character a space in its place). Folding
    again cost as much as the first fold: on Persian text, where ZWNJ sits between letters, the
    second look doubled the scan until 2026-11-30."""
    norm, starts, origins, linear = t.norm, t.starts, t.origins, t.linear
    parts: list[str] = []
    starts2: list[int] = []
    origins2: list[int] = []
    linear2: list[bool] = []
    shift = 0  # spaces inserted so far
    at = 0  # pieces of t copied so far
    prev = 0  # norm copied so far
    for m in _HIDDEN_CHAR.finditer(text):
        p = m.start()
        if 0xE0020 <= ord(text[p]) <= 0xE007E:  # decoded to one character: a space instead
            q = t.norm_at(p)
            parts.append(norm[prev:q])
            parts.append(" ")
            prev = q + 1
            continue
        while at < len(starts) and origins[at] <= p:
            starts2.append(starts[at] + shift)
            origins2.append(origins[at])
            linear2.append(linear[at])
            at += 1
        q = starts[at] if at < len(starts) else len(norm)  # the dropped character's place
        parts.append(norm[prev:q])
        parts.append(" ")
        prev = q
        starts2.append(q + shift)
        origins2.append(p)
        linear2.append(True)
        shift += 1
    for i in range(at, len(starts)):
        starts2.append(starts[i] + shift)
        origins2.append(origins[i])
        linear2.append(linear[i])
    parts.append(norm[prev:])
    norm2 = "".join(parts)
    return _Text(norm2, _lower(norm2), starts2, origins2, linear2, [], {})


@lru_cache(maxsize=8192)
def _fold_char(ch: str) -> str:
    cp = ord(ch)
    if 0xE0020 <= cp <= 0xE007E:
        # Tag characters spell ASCII a model can read and a person cannot see.
        return chr(cp - 0xE0000)
    if cp in _IGNORABLE:
        return ""
    if ch in _CONFUSABLE:
        return _CONFUSABLE[ch]
    folded = unicodedata.normalize("NFKC", ch)
    return "".join(c for c in folded if ord(c) not in _IGNORABLE)


def _is_hidden(cp: int) -> bool:
    """A character people cannot see, which the hygiene rules look at."""
    return cp in _IGNORABLE


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

    def norm_at(self, orig: int) -> int:
        """Where the original character at `orig`, folded one to one, is in `norm`."""
        i = bisect.bisect_right(self.origins, orig) - 1
        return self.starts[i] + orig - self.origins[i]


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
    return _Text(norm, _lower(norm), build.starts, build.origins, build.linear, hidden, {})


def _lower(norm: str) -> str:
    """`norm` lower-cased, as long as `norm`."""
    low = norm.lower()
    if len(low) != len(norm):  # a few letters (İ) lower-case to two characters
        low = "".join(c.lower()[0] for c in norm)
    return low


def _emojiish(ch: str) -> bool:
    cp = ord(ch)
    return cp >= 0x1F000 or 0x2190 <= cp <= 0x2BFF or cp in (0xFE0F, 0x20E3)


def _joined(text: str, i: int) -> bool:
    """A ZWJ / ZWNJ with a legitimate use: inside an emoji sequence, between two letters of
    Arabic, Persian or an Indic script, which join or part letters with it, or after a virama,
    where it makes a half form or ends a word in its old spelling (a Malayalam chillu is
    virama + ZWJ, with a space or nothing after it)."""
    if not 0 < i < len(text):
        return False
    before = text[i - 1]
    if unicodedata.combining(before) == 9:  # canonical combining class 9: a virama
        return True
    if i == len(text) - 1:
        return False
    after = text[i + 1]
    if _emojiish(before) and _emojiish(after):
        return True
    return 0x0600 <= ord(before) <= 0x0DFF and 0x0600 <= ord(after) <= 0x0DFF


# Scripts written without spaces between words, where a zero-width space marks a word break:
# Thai, Lao, Tibetan, Myanmar, Khmer, Tai Le to Tai Tham, Balinese, Javanese, Myanmar and Tai
# Viet extensions, and Chinese and Japanese (CJK punctuation, kana, ideographs).
_SPACELESS: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0FFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x1950, 0x1AAF),
    (0x1B00, 0x1B7F),
    (0x3001, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA980, 0xAADF),
    (0xF900, 0xFAFF),
    (0xFF66, 0xFF9F),
    (0x20000, 0x3134F),
)
_SPACELESS_CHAR = re.compile(f"[{char_class(_SPACELESS)}]")
# Right-to-left scripts (Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, their
# presentation forms and the historic ones): a direction mark near one of their letters
# keeps a number or a Latin word where it belongs.
_RTL_RANGES: tuple[tuple[int, int], ...] = (
    (0x0590, 0x061B),
    (0x061D, 0x08FF),
    (0xFB1D, 0xFDFF),
    (0xFE70, 0xFEFE),
    (0x10800, 0x10FFF),
    (0x1E800, 0x1EFFF),
)
_RTL_CHAR = re.compile(f"[{char_class(_RTL_RANGES)}]")
_RTL_REACH = 32  # how far from a direction mark a right-to-left letter makes it one in use
_DIRECTION_MARKS = frozenset((0x200E, 0x200F, 0x061C))


def _wordish(ch: str) -> bool:
    """A letter, a digit or a combining mark: part of a word."""
    return bool(ch) and (ch.isalnum() or unicodedata.category(ch)[0] == "M")


def _word_break(before: str, after: str) -> bool:
    """A zero-width space between two words of a script written without spaces (one side may
    be a digit or a letter of another script: 'iPhone\u200bรุ่น')."""
    b = bool(before) and _SPACELESS_CHAR.match(before) is not None
    a = bool(after) and _SPACELESS_CHAR.match(after) is not None
    return (b and (a or _wordish(after))) or (a and _wordish(before))


_H_BIDI = char_class(_BIDI_RANGES)
_H_INVISIBLE = char_class(_INVISIBLE_RANGES)
_H_TAG = char_class(_TAG_RANGES)
# One finding per run of hidden characters of one kind, never a visible character in it.
_HIDDEN_SPAN = {
    rule: re.compile(f"[{chars}]++")
    for rule, chars in (("bidi-control", _H_BIDI), ("tag-char", _H_TAG))
}
_INVISIBLE_CHAR = re.compile(f"[{_H_INVISIBLE}]")
_TAG_FLAG = re.compile("\U0001f3f4([\U000e0020-\U000e007e]{1,16})\U000e007f")


# Characters below U+2190 or in CJK symbols with an emoji or a text presentation (©, ®, ‼, ™,
# ℹ, Ⓜ, 〰, 〽, ㊗, ㊙), besides those _emojiish covers.
_EMOJI_PRESENTATION = frozenset(
    "\u00a9\u00ae\u203c\u2049\u2122\u2139\u24c2\u3030\u303d\u3297\u3299"
)


def _ideograph(cp: int) -> bool:
    return (
        0x3400 <= cp <= 0x4DBF
        or 0x4E00 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or (0x20000 <= cp <= 0x3FFFF)
    )


def _has_variants(base: str, cp: int) -> bool:
    """Whether a variation selector `cp` has a job after `base`: U+FE0E/FE0F after an emoji or
    a character with an emoji presentation, U+FE00-FE0D after a math symbol, an ideograph or
    a letter of the scripts with standardized variants (Myanmar, Phags-pa, Manichaean,
    Egyptian hieroglyphs), an ideographic variation selector (U+E0100-E01EF) after an
    ideograph. Until 2026-11-30 any visible character past ASCII counted, 'é' included."""
    if not base:
        return False
    b = ord(base)
    if cp >= 0xE0100:
        return _ideograph(b)
    if _emojiish(base) or base in _EMOJI_PRESENTATION:
        return True
    return (
        _ideograph(b)
        or 0x1000 <= b <= 0x109F
        or 0xA840 <= b <= 0xA877
        or 0x10AC0 <= b <= 0x10AFF
        or 0x13000 <= b <= 0x1342F
        or 0x2200 <= b <= 0x22FF
        or 0x2A00 <= b <= 0x2AFF
    )


@lru_cache(maxsize=4096)
def _invisible_in_use(text: str, i: int) -> bool:
    """An invisible character doing its job where it is: ZWJ / ZWNJ joining letters or emoji,
    a variation selector after its base (an emoji, an ideograph, a keycap's digit), or a filler
    in its place (`_filler_in_use`)."""
    cp = ord(text[i])
    before = text[i - 1] if i else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if cp in (0x200C, 0x200D):
        return _joined(text, i)
    if cp == 0x200B:
        return _word_break(before, after)
    if _selector(cp):
        # One selector after a base with variants; a chain of them (a way to carry bytes) is
        # a finding, every one of it.
        if after and _selector(ord(after)):
            return False
        keycap = before != "" and before in "0123456789#*" and after == "\u20e3"
        return keycap or _has_variants(before, cp)
    return _filler_in_use(cp, before, after)


def _selector(cp: int) -> bool:
    return 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def _filler_in_use(cp: int, before: str, after: str) -> bool:
    """A soft hyphen inside a word (after a letter, a digit or a combining mark, before another
    or before a line break, where text copied from a PDF keeps it), a Mongolian selector after
    a Mongolian letter, a combining grapheme joiner after a combining mark, a Hangul filler
    beside a jamo. Until 2026-11-30 a soft hyphen counted only between two letters."""
    b = ord(before) if before else -1
    a = ord(after) if after else -1
    if cp in _SHOWN_FORMAT:
        # A number sign or an end of ayah goes before its digits, an Egyptian format control
        # between two hieroglyphs; interlinear annotation has no use in stored text.
        return after.isdigit() or (0x13000 <= b <= 0x1345F and 0x13000 <= a <= 0x1345F)
    if cp == 0x00AD:
        return _wordish(before) and (_wordish(after) or after in "\n\r\x85\u2028")
    if 0x180B <= cp <= 0x180F:
        return 0x1820 <= b <= 0x18AF
    if cp == 0x034F:
        return b >= 0 and unicodedata.combining(before) > 0
    return cp in (0x115F, 0x1160) and (0x1100 <= b <= 0x11FF or 0x1100 <= a <= 0x11FF)


def _misplaced_invisible(text: str, start: int, end: int) -> Iterator[tuple[str, int, int]]:
    """Invisible characters in text[start:end] not in use where they are: one finding for each
    run of them with nothing visible between (a finding never covers a visible character, so
    redacting it on read takes no word away; until 2026-11-30 findings up to 16 characters
    apart were one span, and the words between them were redacted with it)."""
    run_start = run_end = -1
    for m in _INVISIBLE_CHAR.finditer(text, start, end):
        i = m.start()
        if _in_use_at(text, i):
            continue
        if i == run_end:
            run_end = i + 1
            continue
        if run_end > 0:
            yield "invisible-char", run_start, run_end
        run_start, run_end = i, i + 1
    if run_end > 0:
        yield "invisible-char", run_start, run_end


def _in_use_at(text: str, i: int) -> bool:
    if ord(text[i]) in _DIRECTION_MARKS:
        # Right-to-left text beside numbers or Latin needs them: a right-to-left letter near.
        near = text[max(0, i - _RTL_REACH) : i] + text[i + 1 : i + 1 + _RTL_REACH]
        return _RTL_CHAR.search(near) is not None
    lo = max(0, i - 1)
    # The character and its neighbours decide: a short key, so the answer is cached.
    return _invisible_in_use(text[lo : i + 2], i - lo)


def _legitimate(rule: str, text: str, s: int, e: int) -> bool:
    """Hidden characters with a use: tags in region flags."""
    if rule == "tag-char" and "\U0001f3f4" in text[max(0, s - 1) : e]:
        # Every tag must belong to a flag like 🏴 + "gbsct" + cancel tag (Scotland).
        flags = sum(m.end() - m.start() - 1 for m in _TAG_FLAG.finditer(text, max(0, s - 1), e))
        tags = sum(1 for ch in text[s:e] if 0xE0000 <= ord(ch) <= 0xE007F)
        return flags == tags
    return False


def _hygiene(text: str, regions: list[tuple[int, int]]) -> Iterator[tuple[str, int, int]]:
    """Hidden characters worth reporting: (rule, start, end) in the original text, one finding
    for each run of hidden characters of one kind ("ig\u200bn\u200bore" gives two).
    `regions` (where the fold found hidden characters) only says whether to look: the regex
    engine goes through the whole text faster than Python goes through the regions."""
    if not regions:
        return
    first = 1 if text[0] == "\ufeff" else 0  # skip a byte-order mark
    yield from _misplaced_invisible(text, first, len(text))
    for rule, pattern in _HIDDEN_SPAN.items():
        for m in pattern.finditer(text, first):
            if not _legitimate(rule, text, *m.span()):
                yield rule, m.start(), m.end()
