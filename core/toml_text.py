"""The text of a TOML file a person edits (settings.toml, policy.toml), read before any parser
sees it: never waited on, never read past a cap.

Cairn reads these files at start and, for the policy, on every edit while holding the lock that
`policy set` waits on: until 2026-12-01 a FIFO in their place (or a link to one) left Cairn
waiting for a writer for good, a link to /dev/zero or /dev/urandom read without end, and a
512 MiB file was read whole before its size was checked.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from pathlib import Path

from core.atomic_file import reason_for

# A policy or settings file is a few KB: 1 MiB is far more than a person writes, and small
# enough to read and parse at once.
MAX_BYTES = 1024 * 1024

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO, a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class TextRefused(Exception):
    """The file was not read: `reason` says why, as a sentence about the file ("is not a
    regular file (a FIFO)")."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotAFile(TextRefused):
    """The path leads to a folder, a FIFO, a device or a socket, not to a regular file."""


class TooBig(TextRefused):
    """The file holds more than the cap; `size` is what it holds (at least cap + 1)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"is too big: {size:,} bytes, where Cairn reads at most {_mib(limit)} - was "
            "something else written into it?"
        )
        self.size = size


def _mib(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit:,} bytes"


def _refuse_unless_regular(mode: int) -> None:
    for check, kind in _KINDS:
        if check(mode):
            raise NotAFile(f"is not a regular file ({kind})")
    if not stat.S_ISREG(mode):
        raise NotAFile("is not a regular file")


def read_text(path: Path, *, limit: int = MAX_BYTES) -> str:
    """The text of the regular file at `path` (symbolic links followed, a UTF-8 byte order mark
    left out: Windows Notepad writes one and TOML has no place for it), read only when it is a
    regular file of at most `limit` bytes.

    Raises:
        NotAFile: the path leads to a folder, a FIFO, a device or a socket; nothing was read
            and nothing waited on.
        TooBig: the file holds more than `limit` bytes; at most `limit` + 1 were read.
        FileNotFoundError, OSError: as opening or reading the file raises them.
        UnicodeDecodeError: the text is not UTF-8.
    """
    _refuse_unless_regular(os.stat(path).st_mode)  # before opening: a device may act on open
    # Not waited on even if a FIFO was put there since the check; links are followed on
    # purpose (a dotfile manager's policy.toml is one).
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        _refuse_unless_regular(info.st_mode)
        if info.st_size > limit:
            raise TooBig(info.st_size, limit)
        chunks: list[bytes] = []
        left = limit + 1  # the file may have grown since fstat
        while left > 0:
            chunk = os.read(fd, min(left, 256 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooBig(max(info.st_size, len(data)), limit)
    return data.decode("utf-8-sig")


def unreadable(e: OSError | UnicodeDecodeError, path: Path) -> str:
    """Why the file at `path` cannot be read, in words a person acts on - the same for the
    settings and the policy file (until 2026-12-01 the settings', until 2026-12-02 the policy's,
    were Python's: "[Errno 13] Permission denied: '...'", "'utf-8' codec can't decode byte")."""
    if isinstance(e, UnicodeDecodeError):
        return f"it is not UTF-8 text (byte {e.object[e.start]:#04x} at offset {e.start})"
    return reason_for(e, path.parent)


# -- nesting ----------------------------------------------------------------------------------

# How deep a key, a table header or a value may nest: a policy file's deepest key is 4 levels
# (`agents.<name>.kinds.<kind>`), a settings file's 2. Past it the parsers fail badly: tomllib
# takes quadratic time over a dotted key's parts (95 s for 50,000 in 100 KB), and tomlkit (and
# tomllib, for arrays) recurse once a level, raising RecursionError from about 300 levels.
MAX_DEPTH = 32

# What the scan needs of TOML: strings (in which nothing counts), comments, bare keys and the
# characters that open, close, separate and assign. Anything else (numbers, dates, spaces) is
# skipped over by `finditer` without a token.
_TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""(?:""?(?!"))?'  # a multi-line basic string
    r"|'''(?:[^']|'(?!''))*'''(?:''?(?!'))?"  # a multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"'  # a basic string
    r"|'[^'\n]*'"  # a literal string
    r"|#[^\n]*"  # a comment
    r"|[A-Za-z0-9_-]+"  # a bare key (or a number, a date, a word of a value)
    r"|[\[\]{}.=,\n]",
    re.DOTALL,
)


class TooDeep(TextRefused):
    """The text nests keys, tables or values more than `MAX_DEPTH` levels deep; `line`
    (1-based) is where it first does."""

    def __init__(self, line: int) -> None:
        super().__init__(
            f"nested more than {MAX_DEPTH} levels deep: a dotted key or table header of more "
            f"than {MAX_DEPTH} parts, or arrays and inline tables inside each other, where a "
            "person's file nests a few levels"
        )
        self.line = line


# A line that is plainly shallow, matched whole: a header, or `key = value` where the value is
# a string, a word (a number, a date, true) or an array or inline table of those - nearly every
# line of a real file, taken in one match (a token at a time, 1 MiB took up to 1.3 s).
_PART = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_KEY = rf"{_PART}(?:[ \t]*\.[ \t]*{_PART}){{0,7}}"  # at most 8 parts
_WORD = r"""(?:"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s#,\[\]{}"'=]+(?:[ \t]+[^\s#,\[\]{}"'=]+)?)"""
_PAIR = rf"{_KEY}[ \t]*=[ \t]*{_WORD}"
_VALUE = (
    rf"(?:{_WORD}"
    rf"|\{{[ \t]*(?:{_PAIR}(?:[ \t]*,[ \t]*{_PAIR})*)?[ \t]*\}}"
    rf"|\[[ \t]*(?:{_WORD}(?:[ \t]*,[ \t]*{_WORD})*[ \t]*,?)?[ \t]*\])"
)
_PLAIN_LINE = re.compile(
    rf"[ \t]*(?:\[\[?[ \t]*(?P<header>{_KEY})[ \t]*\]\]?"
    rf"|(?P<key>{_KEY})(?:[ \t]*=[ \t]*{_VALUE})?)?"
    r"[ \t]*(?:#[^\n]*)?(?:\r?\n|\Z)"
)
_PARTS = re.compile(_PART)

KeyPath = tuple[str, ...]


class KeyLines:
    """Where each key of a TOML text is first written (1-based lines), by its path from the
    root: `[agents.bot]` on line 3 is ("agents",) and ("agents", "bot") unless either was
    written before, and `kinds.idea = 5` below it ("agents", "bot", "kinds") and
    ("agents", "bot", "kinds", "idea")."""

    def __init__(self) -> None:
        self._lines: dict[KeyPath, int] = {}

    def note(self, path: KeyPath, line: int) -> None:
        for n in range(1, len(path) + 1):
            self._lines.setdefault(path[:n], line)

    def line(self, *path: str) -> int | None:
        """The line `path` is written on, else that of the nearest table holding it that is
        (an inline table's keys are on its own line); None when no part of it is written."""
        for n in range(len(path), 0, -1):
            found = self._lines.get(path[:n])
            if found is not None:
                return found
        return None


def key_lines(text: str) -> KeyLines:
    """Where each key of TOML `text` is written, found in one pass over it before any parser
    reads it - refusing text nested past `MAX_DEPTH`. Valid or not, text nested less passes:
    a parser then says what is wrong.

    Raises:
        TooDeep: naming the line.
    """
    scan = _Scan()
    at, end = 0, len(text)
    while at < end:
        if scan.at_line_start():
            plain = _PLAIN_LINE.match(text, at)
            if plain is not None:
                scan.plain(plain["header"], plain["key"])
                at = plain.end()
                continue
        token = _TOKEN.search(text, at)
        if token is None:
            break
        scan.step(token.group())
        if len(scan.brackets) + len(scan.key) > MAX_DEPTH:
            raise TooDeep(scan.line)
        at = token.end()
    return scan.lines


def _name(token: str) -> str:
    """A key's part as the parsers read it: a bare key as it is, a quoted one unquoted."""
    if token[0] == '"' and "\\" in token:
        try:
            return str(tomllib.loads(f"k = {token}")["k"])
        except tomllib.TOMLDecodeError:
            pass
    return token[1:-1] if token[0] in "\"'" else token


class _Scan:
    """Where a pass over TOML tokens is: its line, the brackets open, the key being read, the
    table the keys are in, and the lines of the keys read so far."""

    def __init__(self) -> None:
        self.lines = KeyLines()
        self.line = 1
        self.brackets: list[tuple[str, KeyPath]] = []  # arrays (`[`), inline tables (`{`) open
        self.key: list[str] = []  # the parts of the key (or table header) being read
        self.dot = False  # the last token of the key was a dot
        self.in_key = True  # a key comes next: a line's start, or after `{` or `,` in a table
        self.in_header = False
        self.table: KeyPath = ()  # the last table header's
        self.value: KeyPath = ()  # the key whose value is being read

    def at_line_start(self) -> bool:
        return self.in_key and not self.key and not self.brackets and not self.in_header

    def plain(self, header: str | None, key: str | None) -> None:
        """A plain line was read whole (`_PLAIN_LINE`)."""
        if header is not None:
            self.table = tuple(_name(p) for p in _PARTS.findall(header))
            self.lines.note(self.table, self.line)
        elif key is not None:
            self.lines.note(self.table + tuple(_name(p) for p in _PARTS.findall(key)), self.line)
        self.line += 1

    def step(self, token: str) -> None:
        first = token[0]
        if first == "\n":
            if not self.brackets:
                self.in_key, self.in_header, self.key, self.dot = True, False, [], False
        elif first == "#":
            pass
        elif self.in_header or (self.in_key and first not in "=[]{},"):
            self._key(token)
        elif self.in_key and first == "[" and not self.brackets and not self.key:
            self.in_header = True
        elif self.in_key and first == "=":
            inside = self.brackets[-1][1] if self.brackets and self.brackets[-1][0] == "{" else ()
            self.value = (inside or self.table) + tuple(self.key)
            self.lines.note(self.value, self.line)
            self.in_key, self.key, self.dot = False, [], False
        else:
            self._value(first)
        self.line += token.count("\n")  # a line break, or a multi-line string's

    def _key(self, token: str) -> None:
        first = token[0]
        if first == ".":
            self.dot = True
        elif first == "]" and self.in_header and self.key:
            self.table = tuple(self.key)
            self.lines.note(self.table, self.line)
            self.in_header, self.key = False, []
            self.in_key = False  # nothing but a comment follows a header on its line
        elif first not in "[]" and (not self.key or self.dot):
            self.key.append(_name(token))
            self.dot = False

    def _value(self, first: str) -> None:
        if first in "[{":
            self.brackets.append((first, self.value))
            self.in_key = first == "{"
        elif first in "]}":
            if self.brackets:
                self.brackets.pop()
            self.in_key = False
        elif first == "," and self.brackets and self.brackets[-1][0] == "{":
            self.in_key, self.key, self.dot = True, [], False
