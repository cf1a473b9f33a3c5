"""Domain checks on memory fields, with the limits from settings, and content normalisation."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from core.errors import InvalidInput, TooLarge
from core.model import BUILTIN_KINDS
from core.settings import Settings
from core.wording import CONTROLS

# Refused in every text field: every C0 control but tab and line feed, DEL, and the C1 controls
# U+0080-U+009F (CSI U+009B and OSC U+009D are escape sequences of their own; until 2026-11-30
# they passed). A carriage return and NEL (U+0085) are among them (a lone carriage return sent
# a person's terminal back to the line's start, so the text after it hid the words before it):
# the fields that take line breaks store both as a line feed first (`normalize_breaks`), so
# only a caller that skipped that step meets the refusal.
CONTROL = re.compile(f"[{CONTROLS}]")

# A session id as an agent's hello gives it: at most this long, no C0 control or DEL (since
# 2026-11-30; a store from before may hold one, which an import keeps out).
MAX_SESSION_CHARS = 128
SESSION_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# A folder's path refuses tab and line feed as well (every character of Unicode category Cc): a
# path is shown on one line, at a terminal too.
_CONTROL_IN_PATH = re.compile(f"[\t\n{CONTROLS}]")
# What every write refused before 2026-11-30: an archive from then may hold anything else - a
# carriage return, which the import stores as a line feed, or a C1 control, which keeps that
# memory out - and is not refused whole for it.
EVER_REFUSED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# CRLF, a lone CR and NEL (U+0085) are line breaks: each is stored as one line feed.
_LINE_BREAK = re.compile(r"\r\n?|\x85")
_SPACE_RUN = re.compile(r"\s+")


class Limits:
    """The field limits in force, read once from settings."""

    def __init__(self, settings: Settings) -> None:
        self.max_content_bytes = settings.integer("limits.max_content_bytes")
        self.max_summary_bytes = settings.integer("limits.max_summary_bytes")
        self.max_keywords_bytes = settings.integer("limits.max_keywords_bytes")
        self.max_tags = settings.integer("limits.max_tags")
        self.max_tag_chars = settings.integer("limits.max_tag_chars")
        self.max_source_chars = settings.integer("limits.max_source_chars")
        # Each extra kind is a lowercase word: the settings refuse any other (`KIND_WORD`).
        extra = settings.strings("memory.extra_kinds")
        self.kinds: tuple[str, ...] = BUILTIN_KINDS + tuple(
            k for k in extra if k not in BUILTIN_KINDS
        )


def utf8_size(field: str, text: str) -> int:
    """Bytes of `text` in UTF-8; InvalidInput when it holds an unpaired surrogate."""
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise InvalidInput(
            f"field '{field}' is not valid UTF-8 (unpaired surrogate at character {e.start})",
            data={"field": field},
        ) from None


def normalize_breaks(text: str) -> str:
    """`text` with each CRLF, lone carriage return and NEL (U+0085) as a line feed (until
    2026-11-30 they were stored as they came, and a lone carriage return let the text after it
    print over the words before it at a person's terminal)."""
    return _LINE_BREAK.sub("\n", text)


def refuse_control(
    field: str, text: str, refused: re.Pattern[str] = CONTROL, *, label: str | None = None
) -> None:
    """Raise InvalidInput naming `field` (worded as `label`, by default "field '<field>'") when
    `text` holds a control character (an escape sequence would reach a person's terminal and
    hide words from them); `refused` says which ones."""
    match = refused.search(text)
    if match:
        named = label or f"field '{field}'"
        raise InvalidInput(
            f"{named} contains a control character (U+{ord(match.group()):04X}) at character "
            f"{match.start()}",
            data={"field": field},
        )


def control_in_path(path: str) -> int | None:
    """Where a folder's `path` holds its first control character (line breaks and C1 controls
    included), or None when it holds none."""
    match = _CONTROL_IN_PATH.search(path)
    return None if match is None else match.start()


def refuse_control_in_path(field: str, path: str, *, label: str) -> None:
    """Raise InvalidInput (naming `field`, worded as `label`) when a folder's `path` holds a
    control character, line breaks and C1 controls included: a path is shown on one line, at a
    terminal too."""
    refuse_control(field, path, _CONTROL_IN_PATH, label=label)


def check_text(
    field: str,
    text: str,
    max_bytes: int,
    *,
    allow_empty: bool = False,
    refused: re.Pattern[str] = CONTROL,
) -> str:
    """`text` with its line breaks as line feeds (`normalize_breaks`), once it is valid UTF-8,
    not blank (unless `allow_empty`), free of the control characters `refused` names and
    within `max_bytes`.

    Raises:
        InvalidInput: naming `field`, for an unpaired surrogate, blank text or a control
            character (with its code point and position).
        TooLarge: naming `field`, its size and the limit.
    """
    text = normalize_breaks(text)
    size = utf8_size(field, text)
    if not allow_empty and not text.strip():
        raise InvalidInput(f"field '{field}' is empty or only whitespace", data={"field": field})
    refuse_control(field, text, refused)
    if size > max_bytes:
        # Splitting is advice for a memory's words only (until 2026-11-30 a feedback note or
        # a summary was told to split into several memories).
        advice = "shorten it"
        if field == "content":
            advice += ", or split it into several memories"
        raise TooLarge(
            f"field '{field}' is {size} bytes; the limit is {max_bytes} bytes (nothing was cut: "
            f"{advice})",
            data={"field": field, "size": size, "limit": max_bytes},
        )
    return text


def check_content(text: str, limits: Limits) -> str:
    return check_text("content", text, limits.max_content_bytes)


def check_summary(text: str | None, limits: Limits, *, field: str = "summary") -> str | None:
    """A summary-sized text (a summary, a feedback note), trimmed; None when blank."""
    if text is None or not text.strip():
        return None
    return check_text(field, text.strip(), limits.max_summary_bytes)


def check_keywords(text: str | None, limits: Limits) -> str | None:
    if text is None or not text.strip():
        return None
    return check_text("keywords", text.strip(), limits.max_keywords_bytes)


def check_source(text: str | None, limits: Limits) -> str | None:
    if text is None:
        return None
    text = check_text("source", text.strip(), 4 * limits.max_source_chars)
    if len(text) > limits.max_source_chars:
        raise TooLarge(
            f"field 'source' is {len(text)} characters; the limit is {limits.max_source_chars}",
            data={"field": "source", "size": len(text), "limit": limits.max_source_chars},
        )
    return text


def check_kind(kind: str, limits: Limits) -> str:
    if kind not in limits.kinds:
        raise InvalidInput(
            f"unknown kind {kind!r} (expected one of: {', '.join(limits.kinds)})",
            data={"field": "kind"},
        )
    return kind


def check_importance(value: object, refusal: str | None = None) -> int:
    """`value` when it is a whole number from 1 to 5 (a bool is not one).

    Raises:
        InvalidInput: naming the field; `refusal` is its message (by default one naming the
            value).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
        raise InvalidInput(
            refusal or f"importance must be between 1 and 5, got {value!r}",
            data={"field": "importance"},
        )
    return value


def check_tags(tags: tuple[str, ...], limits: Limits) -> tuple[str, ...]:
    """Trim, lowercase and de-duplicate tags (order kept); refuse too many or too long ones."""
    seen: dict[str, None] = {}
    for raw in tags:
        check_text("tags", raw, 4 * limits.max_tag_chars)
        tag = _SPACE_RUN.sub(" ", unicodedata.normalize("NFKC", raw).strip().lower())
        if len(tag) > limits.max_tag_chars:
            raise TooLarge(
                f"tag {tag[:20]!r}... is {len(tag)} characters; the limit is "
                f"{limits.max_tag_chars}",
                data={"field": "tags", "size": len(tag), "limit": limits.max_tag_chars},
            )
        seen[tag] = None
    if len(seen) > limits.max_tags:
        raise TooLarge(
            f"{len(seen)} tags given; the limit is {limits.max_tags}",
            data={"field": "tags", "size": len(seen), "limit": limits.max_tags},
        )
    return tuple(seen)


def check_ttl(ttl_seconds: int | None) -> int | None:
    if ttl_seconds is None:
        return None
    if ttl_seconds <= 0:
        raise InvalidInput(
            f"ttl_seconds must be a positive number of seconds, got {ttl_seconds}",
            data={"field": "ttl_seconds"},
        )
    if ttl_seconds > 100 * 365 * 86400:
        raise InvalidInput("ttl_seconds is more than 100 years", data={"field": "ttl_seconds"})
    return ttl_seconds


def normalized_for_hash(content: str) -> str:
    """Content as compared for exact duplicates: NFC, whitespace runs collapsed, trimmed."""
    return _SPACE_RUN.sub(" ", unicodedata.normalize("NFC", content)).strip()


def content_hash(content: str) -> str:
    return hashlib.sha256(normalized_for_hash(content).encode("utf-8")).hexdigest()
