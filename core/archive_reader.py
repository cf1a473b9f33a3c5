"""Reading an archive back: the zip opened defensively (sizes, names, line lengths), the
manifest and every file's sha256 checked, each record checked against its exact shape -
before anything touches the store."""

from __future__ import annotations

import hashlib
import re
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from core.archive_format import (
    FORMAT,
    FORMAT_VERSION,
    HISTORY_SUFFIX,
    IDENTITY_DIR,
    MANIFEST,
    MEMORIES,
    POLICY,
    REQUIRED_FILES,
    SUPPORTED_FORMAT_VERSIONS,
    TOMBSTONES,
    WORKSPACES,
    identity_stem,
)
from core.archive_memories import ArchiveMemories, Collector
from core.archive_records import (
    IDENTITY_SPEC,
    MAX_TIME,
    SHA256,
    TOMBSTONE_SPEC,
    Tombstone,
    breaks_as_now,
    checked,
    invalid,
    is_int,
    lone_surrogate,
    parse_json,
    parse_memory,
    parse_workspace,
)
from core.errors import InvalidInput
from core.identity import IdentityVersion, check_doc
from core.model import Workspace
from core.old_names import as_now
from core.validation import Limits, content_hash

MAX_LINE_BYTES = 64 * 1024 * 1024
_MAX_MANIFEST_BYTES = 16 * 1024 * 1024
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")


@dataclass(frozen=True)
class Archive:
    """Everything an archive brings that an import uses (the review queue, the audit log and the
    policy stay in the archive: they are the other store's, not this one's). Its memories are
    read from the archive again as the import goes (`core/archive_memories.py`): the archive
    is open while this is used (`open_archive`)."""

    manifest: dict[str, Any]
    memories: ArchiveMemories
    workspaces: tuple[Workspace, ...]
    tombstones: tuple[Tombstone, ...]
    identity: tuple[IdentityVersion, ...]


def is_archive(path: Path) -> bool:
    """A zip file (by its first bytes): an archive, whole or damaged - never a JSON-lines file."""
    with open(path, "rb") as fh:
        return fh.read(4) in _ZIP_MAGIC


# -- reading the zip ----------------------------------------------------------------------------


def read_lines(fh: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) for each line; None for a line longer than MAX_LINE_BYTES (skipped
    without holding it in memory)."""
    number = 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while True:
                rest = fh.readline(1 << 20)
                if not rest or rest.endswith(b"\n"):
                    break
            yield number, None
            continue
        yield number, raw


_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError, RuntimeError)


class _Zip:
    """An archive opened for reading; a failure of the zip itself names the member."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._zf = zipfile.ZipFile(path)
        except _ZIP_ERRORS as e:
            raise InvalidInput(
                f"{path} is not a readable Cairn archive ({e}); nothing was imported",
                data={"file": str(path)},
            ) from e

    def close(self) -> None:
        self._zf.close()

    def names(self) -> list[str]:
        return self._zf.namelist()

    def size(self, name: str) -> int:
        return self._zf.getinfo(name).file_size

    def read(self, name: str) -> bytes:
        try:
            return self._zf.read(name)
        except _ZIP_ERRORS as e:
            raise invalid(name, f"cannot be read ({e})") from e

    def digest(self, name: str) -> tuple[str, int]:
        sha, size = hashlib.sha256(), 0
        try:
            with self._zf.open(name) as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    sha.update(chunk)
                    size += len(chunk)
        except _ZIP_ERRORS as e:
            raise invalid(name, f"cannot be read ({e})") from e
        return sha.hexdigest(), size

    def lines(self, name: str) -> Iterator[tuple[int, bytes | None]]:
        """(line number, bytes) for each line of a member, as `read_lines` gives them."""
        try:
            with self._zf.open(name) as fh:
                yield from read_lines(fh)
        except _ZIP_ERRORS as e:
            raise invalid(name, f"cannot be read ({e})") from e

    def records(self, name: str) -> Iterator[tuple[str, bytes, Any]]:
        """(where, the line, its JSON value) for each line of a JSON-lines member."""
        for number, raw in self.lines(name):
            where = f"{name} line {number}"
            if raw is None:
                raise invalid(where, f"is longer than {MAX_LINE_BYTES} bytes")
            yield where, raw, parse_json(raw, where)


def _known_member(name: str) -> bool:
    if name in (*REQUIRED_FILES, POLICY):
        return True
    if not name.startswith(IDENTITY_DIR):
        return False
    stem = name[len(IDENTITY_DIR) :]
    for suffix in (HISTORY_SUFFIX, ".md"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            return bool(re.fullmatch(r"[A-Za-z0-9_%-]+", stem))
    return False


def _check_manifest(path: Path, raw: bytes) -> dict[str, Any]:
    manifest = parse_json(raw, MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidInput(
            f"{path} is not a Cairn archive ({MANIFEST} does not name the format {FORMAT!r}); "
            "nothing was imported",
            data={"file": MANIFEST},
        )
    version: Any = manifest.get("format_version")
    if not is_int(version) or version < 1:
        raise invalid(MANIFEST, "has no valid format_version")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise InvalidInput(
            f"the archive is in format version {version}, written by a newer Cairn "
            f"({manifest.get('cairn_version')}); this Cairn reads format version "
            f"{FORMAT_VERSION}: upgrade Cairn to import it. Nothing was imported",
            data={"file": MANIFEST, "format_version": version},
        )
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(
        isinstance(v, dict)
        and isinstance(v.get("sha256"), str)
        and SHA256.fullmatch(v["sha256"])
        and is_int(v.get("bytes"))
        for v in files.values()
    ):
        raise invalid(MANIFEST, "has no valid list of files with their sha256")
    created: Any = manifest.get("created_at")
    if not is_int(created) or not 0 <= created <= MAX_TIME:
        raise invalid(MANIFEST, "has no valid created_at")
    if lone_surrogate(manifest):  # its versions and filters are shown
        raise invalid(MANIFEST, "holds text that is not valid UTF-8 (a lone surrogate)")
    return manifest


@contextmanager
def open_archive(path: Path, limits: Limits) -> Iterator[Archive]:
    """Verify an archive completely, then parse it - its memories held to the write path's
    rules, with this store's `limits`; nothing in the store is touched. The archive stays open
    inside the `with`, its memories read again from it as they are used.

    Raises:
        InvalidInput: naming the file (and line) at fault - not a Cairn archive, a newer format,
            a file missing, extra, changed or damaged, or a record that is not valid.
    """
    z = _Zip(path)
    try:
        yield _read(z, limits)
    finally:
        z.close()


def _read(z: _Zip, limits: Limits) -> Archive:
    names = z.names()
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise invalid(name, "appears twice in the archive")
        seen.add(name)
    if MANIFEST not in seen:
        raise InvalidInput(
            f"{z.path} is not a Cairn archive: it has no {MANIFEST}; nothing was imported",
            data={"file": MANIFEST},
        )
    if z.size(MANIFEST) > _MAX_MANIFEST_BYTES:
        raise invalid(MANIFEST, "is too large")
    manifest = _check_manifest(z.path, z.read(MANIFEST))
    files: dict[str, Any] = manifest["files"]
    listed = set(files)
    _check_listing(listed, seen - {MANIFEST})
    for name in sorted(listed):
        digest, size = z.digest(name)
        if digest != files[name]["sha256"] or size != files[name]["bytes"]:
            raise invalid(name, f"does not match its sha256 in {MANIFEST} (changed or damaged)")
    workspaces = _workspaces(z)
    known = {w.id for w in workspaces}
    memories = _memories(z, known, limits)
    tombstones = _tombstones(z, known)
    identity = _identity(z, sorted(n for n in listed if n.endswith(HISTORY_SUFFIX)))
    return Archive(manifest, memories, workspaces, tombstones, identity)


def _check_listing(listed: set[str], present: set[str]) -> None:
    """Nothing missing, nothing extra, nothing this format does not know."""
    for name in sorted(listed - present):
        raise invalid(name, f"is listed in {MANIFEST} but missing from the archive")
    for name in sorted(present - listed):
        raise invalid(name, f"is in the archive but not listed in {MANIFEST}")
    for name in REQUIRED_FILES:
        if name not in listed:
            raise invalid(name, "is missing")
    for name in sorted(listed):
        if not _known_member(name):
            raise invalid(name, f"is not part of archive format version {FORMAT_VERSION}")
        if name.startswith(IDENTITY_DIR):
            stem = name.removesuffix(HISTORY_SUFFIX).removesuffix(".md")
            if {stem + HISTORY_SUFFIX, stem + ".md"} - listed:
                raise invalid(name, "comes without its pair (a document's .md and its history)")


def _workspaces(z: _Zip) -> tuple[Workspace, ...]:
    out: list[Workspace] = []
    ids: set[str] = set()
    paths: set[str] = set()
    for where, _raw, obj in z.records(WORKSPACES):
        w = parse_workspace(obj, where)
        if w["id"] in ids or w["path"] in paths:
            raise invalid(where, "repeats a workspace")
        ids.add(w["id"])
        paths.add(w["path"])
        out.append(Workspace(w["id"], w["path"], w["created_at"]))
    return tuple(out)


def _memories(z: _Zip, workspaces: set[str], limits: Limits) -> ArchiveMemories:
    out = Collector()
    ids: set[str] = set()
    keys: set[tuple[str, str, str, str]] = set()
    for where, raw, obj in z.records(MEMORIES):
        am = parse_memory(obj, where, limits)
        m = am.memory
        if m.id in ids:
            raise invalid(where, f"repeats memory {m.id}")
        ids.add(m.id)
        # The memory's workspace must be known: it lands bound to it. An earlier revision may
        # name a workspace the store no longer has (merged into the current one: the `rebind`
        # revision says so); that is history, kept as it was written.
        if m.workspace_id is not None and m.workspace_id not in workspaces:
            raise invalid(where, f"names workspace {m.workspace_id}, which is not in {WORKSPACES}")
        if m.dedupe_key is not None:
            key = (m.scope.value, m.workspace_id or "", m.session_id or "", m.dedupe_key)
            if key in keys:
                raise invalid(where, "repeats another memory's dedupe key")
            keys.add(key)
        out.add(raw, am)
    return out.memories(MEMORIES, lambda: z.lines(MEMORIES), limits)


def _tombstones(z: _Zip, workspaces: set[str]) -> tuple[Tombstone, ...]:
    out: list[Tombstone] = []
    for where, _raw, obj in z.records(TOMBSTONES):
        # A tombstone may name a workspace the store no longer has (merged away before
        # 2026-11-30, when a merge did not carry tombstones along): it lands as it is.
        out.append(Tombstone(**breaks_as_now(checked(obj, TOMBSTONE_SPEC, where), "reason")))
    return tuple(out)


def _identity(z: _Zip, histories: list[str]) -> tuple[IdentityVersion, ...]:
    out: list[IdentityVersion] = []
    for name in histories:
        stem = name[len(IDENTITY_DIR) : -len(HISTORY_SUFFIX)]
        last = 0
        for where, _raw, obj in z.records(name):
            v = IdentityVersion(
                **breaks_as_now(checked(obj, IDENTITY_SPEC, where), "content", "reason")
            )
            try:  # an old export's `soul:helper\n` is renamed by the import (core/old_names.py)
                check_doc(as_now(v.doc))
            except InvalidInput as e:  # the name is not shown: it may hold what it should not
                raise invalid(where, f"names a document Cairn does not accept: {e.message}") from e
            if identity_stem(v.doc) != stem:
                raise invalid(where, f"belongs to document {v.doc!r}, not to this file")
            if not v.content.strip():
                raise invalid(where, "is empty (no edit makes an empty version)")
            if content_hash(v.content) != v.content_hash:
                raise invalid(where, "has a content_hash that is not its content's")
            if v.version <= last:
                raise invalid(where, "is not in version order")
            last = v.version
            out.append(v)
    return tuple(out)
