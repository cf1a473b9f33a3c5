"""A note as its file holds it: which files in the folder count, the front matter, the memory
fields a note gives, and the small filesystem walks the folder's passes use."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from core import scanner
from core.errors import InvalidInput
from core.model import Scope
from core.validation import control_in_path, normalize_breaks

log = logging.getLogger(__name__)


def eligible(relative: str) -> bool:
    """Whether a path inside the folder is a note: `*.md`, no hidden or temporary part."""
    parts = relative.split("/")
    if any(not p or p.startswith((".", "~", "#")) for p in parts):
        return False
    return parts[-1].lower().endswith(".md")


def shown(relative: str) -> str:
    """A path inside the folder as Cairn may show it: bytes that are not UTF-8 as `\\xNN`,
    other unprintable characters escaped (`\\n`, `\\u200b`), a secret as `[BLOCKED: rule]`."""
    text = os.fsencode(relative).decode("utf-8", "backslashreplace")
    text = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )
    secrets = [f for f in scanner.scan(text) if f.family is scanner.Family.SECRET]
    return scanner.redact(text, secrets) if secrets else text


def name_problem(relative: str, max_chars: int) -> str | None:
    """Why Cairn cannot record a note under this path (the memory's source and the notes_file
    key are the path; `max_chars` is the longest it takes), or None. The message does not quote
    the path: `shown` does that."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return (
            "the file's path is not UTF-8 text (a name from a system with another encoding; the "
            "bytes that are not are shown as \\xNN) - rename the file or its folder"
        )
    # A path is shown on one line: line breaks and tabs too, which a memory's text may hold
    # (until 2026-11-30 a name with a line feed or a tab was taken in).
    at = control_in_path(relative)
    if at is not None:
        return (
            f"the file's path contains a control character (U+{ord(relative[at]):04X}, "
            "shown escaped) - rename the file or its folder"
        )
    if len(relative) > max_chars:
        return (
            f"the file's path is {len(relative)} characters, and Cairn records a note's path of "
            f"at most {max_chars} (limits.max_source_chars, less the 6 of 'notes:') - shorten "
            "the file's name or its folders' names"
        )
    rule = scanner.secret_rule(relative)
    if rule is not None:  # the path is recorded and shown: never a secret
        return (
            f"the file's path looks like it holds a secret (rule {rule}); Cairn does not record "
            "it - rename the file or its folder, and keep the secret in your keychain or a "
            "secret manager"
        )
    return None


# -- the note in a file --------------------------------------------------------------------

FRONT_MATTER_KEYS = ("kind", "scope", "workspace", "tags", "importance", "summary")
IMPORTANCES = ("1", "2", "3", "4", "5")


@dataclass(frozen=True)
class Note:
    """What a note file says: its text (the body) and the memory fields its front matter sets."""

    content: str
    kind: str
    scope: Scope
    workspace: str | None
    tags: tuple[str, ...]
    importance: int
    summary: str | None


def parse_note(text: str, *, default_kind: str, scope: Scope) -> Note:
    """Split a note into its front matter (a `---` fenced block of `key: value` lines at the
    very top) and its body, the memory's content with surrounding whitespace stripped.

    Cairn reads `kind`, `scope`, `workspace`, `tags`, `importance` and `summary` and ignores
    every other key (notes apps keep their own there). `tags` is `[a, b]`, `a, b`, or `- a`
    lines below the key. A `workspace` makes the note a project memory of that directory.

    Raises:
        InvalidInput: an unclosed block, a line that is not `key: value`, a key Cairn reads
            given twice or with a value it cannot use, or no text in the body.
    """
    # Every line end as a line feed first - CRLF, a classic Mac OS lone CR, NEL: until
    # 2026-11-30 a lone-CR note was one line, and its front matter became the memory's text.
    lines = normalize_breaks(text.removeprefix("\ufeff")).split("\n")
    meta: dict[str, str | list[str]] = {}
    body = lines
    if lines[0].rstrip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), 0)
        if not end:
            raise InvalidInput(
                "the front matter opened by '---' on line 1 is never closed (end it with a "
                "line '---')"
            )
        meta = _front_matter(lines[1:end])
        body = lines[end + 1 :]
    content = "\n".join(body).strip()
    if not content:
        raise InvalidInput("the note has no text besides its front matter")
    workspace = _text(meta, "workspace")
    raw_scope = _text(meta, "scope")
    if raw_scope is not None:
        scope = _note_scope(raw_scope, workspace)
    elif workspace is not None:
        scope = Scope.PROJECT
    if scope is Scope.PROJECT and workspace is None:
        raise InvalidInput(
            "front matter: scope 'project' needs 'workspace: <the project's directory>'"
        )
    raw_importance = _text(meta, "importance")
    # Exactly one ASCII digit: int() also reads `+4`, `4_0` (as 40) and other scripts' digits.
    if raw_importance is not None and raw_importance not in IMPORTANCES:
        raise InvalidInput(
            f"front matter: importance must be a whole number from 1 to 5, got {raw_importance!r}"
        )
    importance = int(raw_importance) if raw_importance is not None else 3
    return Note(
        content=content,
        kind=(_text(meta, "kind") or default_kind).lower(),  # as scope: `Fact` is fact
        scope=scope,
        workspace=workspace,
        tags=_tags(meta.get("tags")),
        importance=importance,
        summary=_text(meta, "summary"),
    )


def _front_matter(lines: list[str]) -> dict[str, str | list[str]]:
    out: dict[str, str | list[str]] = {}
    key: str | None = None  # the key the indented lines and `- item` lines belong to
    for number, raw in enumerate(lines, start=2):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if raw[:1] in (" ", "\t") or stripped == "-" or stripped.startswith("- "):
            if key is None:
                raise InvalidInput(f"front matter line {number}: an item with no key above it")
            if key not in FRONT_MATTER_KEYS:
                continue  # part of a key Cairn ignores
            value = out.get(key)
            if key != "tags" or not stripped.startswith("-") or (isinstance(value, str) and value):
                raise InvalidInput(
                    f"front matter line {number}: only tags may be listed on lines below their "
                    f"key ('- tag'); write {key} on one line"
                )
            items = value if isinstance(value, list) else []
            items.append(_unquote(stripped[1:].strip()))
            out[key] = items
            continue
        name, colon, value = raw.partition(":")
        key = name.strip().lower()
        if not colon or not key:
            raise InvalidInput(f"front matter line {number}: expected 'key: value'")
        if key not in FRONT_MATTER_KEYS:
            continue
        if key in out:
            raise InvalidInput(f"front matter line {number}: {key} is given twice")
        value = value.strip()
        if value in ("|", ">", "|-", ">-", "|+", ">+"):
            raise InvalidInput(
                f"front matter line {number}: multi-line values are not read; write {key} on "
                "one line"
            )
        out[key] = value
    return out


def _text(meta: dict[str, str | list[str]], key: str) -> str | None:
    value = meta.get(key)
    if isinstance(value, list):  # `key:` followed by `- item` lines: only tags may do that
        raise InvalidInput(f"front matter: {key} must be one value, not a list")
    text = _unquote(value.strip()) if value else ""
    return text or None


def _note_scope(raw: str, workspace: str | None) -> Scope:
    try:
        scope = Scope(raw.lower())
    except ValueError:
        raise InvalidInput(
            f"front matter: scope must be global, user or project, got {raw!r}"
        ) from None
    if scope is Scope.SESSION:
        raise InvalidInput(
            "front matter: a note cannot be a session memory (it outlives every session); use "
            "global, user or project"
        )
    if workspace is not None and scope is not Scope.PROJECT:
        raise InvalidInput(
            f"front matter: workspace is for project notes, but the scope says {scope.value}"
        )
    return scope


def _tags(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            if not text.endswith("]"):
                raise InvalidInput("front matter: tags open a list with '[' and never close it")
            text = text[1:-1]
        value = _split(text)
    tags = (_unquote(t.strip()).lstrip("#").strip() for t in value)
    return tuple(t for t in tags if t)


def _split(text: str) -> list[str]:
    """Split on commas outside quotes."""
    items: list[str] = []
    current: list[str] = []
    quote = ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            items.append("".join(current))
            current = []
            continue
        current.append(ch)
    items.append("".join(current))
    return items


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        return inner.replace("''", "'") if text[0] == "'" else inner.replace('\\"', '"')
    return text


def changed_ns(st: os.stat_result) -> int:
    """When a file last changed, as far as a stat can tell: the later of its modification time
    and its inode's change time - `cp -p` and sync tools keep the first but cannot set the
    second, so an edit that keeps the size and the time is still seen."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def walk_notes(folder: Path) -> Iterator[tuple[str, tuple[int, int]]]:
    """Every note under `folder`: (relative POSIX path, (mtime_ns, size)). Hidden entries and
    symbolic links are not followed (a link could leave the folder or loop)."""
    stack = [(str(folder), "")]
    while stack:
        directory, prefix = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as e:
            log.info("notes: cannot list %s: %s", shown(directory), e.strerror)
            continue
        for entry in entries:
            if entry.name.startswith((".", "~", "#")) or entry.is_symlink():
                continue
            relative = prefix + entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, relative + "/"))
                elif entry.is_file(follow_symlinks=False) and eligible(relative):
                    st = entry.stat(follow_symlinks=False)
                    yield relative, (changed_ns(st), st.st_size)
            except OSError:
                continue  # vanished while we looked: the next pass sees it gone


def stat_paths(folder: Path, paths: Iterable[str]) -> dict[str, tuple[int, int]]:
    """The notes among `paths` that exist now, as `walk_notes` would find them (no symbolic
    link on the way, no hidden part). Each file and each subfolder on the way is stat'ed once."""
    out: dict[str, tuple[int, int]] = {}
    subfolders: set[str] = set()  # the subfolders seen to be real folders, not links
    for relative in paths:
        if not eligible(relative):
            continue
        *parents, name = relative.split("/")
        current = str(folder)
        try:
            for part in parents:
                current = os.path.join(current, part)
                if current not in subfolders:
                    if not stat.S_ISDIR(os.lstat(current).st_mode):
                        break  # a symbolic link (or a file): not followed
                    subfolders.add(current)
            else:
                st = os.lstat(os.path.join(current, name))
                if stat.S_ISREG(st.st_mode):
                    out[relative] = (changed_ns(st), st.st_size)
        except OSError:
            continue  # not there (any more)
    return out


def folder_identity(folder: Path) -> tuple[str, int, int] | None:
    """Where the folder at `folder` is - its path with symbolic links resolved - and its
    (device, inode), or None when there is no folder there or it cannot be looked at. A watch
    is made on the resolved path (watchdog reports nothing under a root that is a link), so a
    link that leads elsewhere now is another folder, as one made anew is."""
    resolved = os.path.realpath(folder)
    try:
        st = os.stat(resolved)
    except OSError:
        return None
    return (resolved, st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def relative_path(root: str, path: str) -> str | None:
    if not path.startswith(root + os.sep):
        return None
    return path[len(root) + 1 :].replace(os.sep, "/")
