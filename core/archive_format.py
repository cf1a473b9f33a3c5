"""The archive format: its files, the shape of its records and manifest, and canonical JSON.

The layout is documented in docs/backup-and-export.md. Record files are canonical (sorted keys, a
fixed order, no time of the export inside them), so the same memories always give the same bytes;
the time of the export lives in the manifest only. `core/archive_records.py` checks the records
when an archive is read back.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.model import Memory, Relation, Revision, Scope

FORMAT = "cairn-archive"
FORMAT_VERSION = 1
SUPPORTED_FORMAT_VERSIONS = (1,)

MANIFEST = "manifest.json"
MEMORIES = "memories.jsonl"
MEMORIES_MD = "memories.md"
SUGGESTIONS = "suggestions.jsonl"
AUDIT = "audit.jsonl"
POLICY = "policy.toml"
WORKSPACES = "workspaces.jsonl"
TOMBSTONES = "tombstones.jsonl"
IDENTITY_DIR = "identity/"
HISTORY_SUFFIX = ".history.jsonl"
REQUIRED_FILES = (MEMORIES, MEMORIES_MD, SUGGESTIONS, AUDIT, WORKSPACES, TOMBSTONES)
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def canonical(obj: Any) -> bytes:
    """One record as a line of canonical JSON: sorted keys, no spaces, UTF-8, newline-ended."""
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return (text + "\n").encode("utf-8")


def identity_stem(doc: str) -> str:
    """A file-name-safe, reversible spelling of an identity document's name: letters, digits, '_'
    and '-' as they are, every other UTF-8 byte as %XX (`soul:default` -> `soul%3Adefault`)."""
    return "".join(
        ch if ch in _SAFE else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in doc
    )


def revision_record(r: Revision) -> dict[str, Any]:
    out = r.to_dict()
    del out["memory_id"]  # the memory it belongs to holds it
    return out


def relation_record(r: Relation) -> dict[str, Any]:
    out = r.to_dict()
    del out["id"], out["from_id"]  # ids of relations are local to a store; `from` is the holder
    return out


def memory_record(m: Memory, revisions: list[Revision], links: list[Relation]) -> dict[str, Any]:
    out = m.to_dict()
    del out["expired"]  # depends on when it is read, not on the memory
    out["revisions"] = [revision_record(r) for r in revisions]
    out["relations"] = [relation_record(r) for r in links]
    return out


@dataclass(frozen=True)
class Filters:
    """Which memories an export holds: scopes (all when empty) and, for memories that belong to
    a workspace, which workspaces (all when empty)."""

    scopes: frozenset[Scope] = frozenset()
    workspace_ids: frozenset[str] = frozenset()

    @property
    def active(self) -> bool:
        return bool(self.scopes or self.workspace_ids)

    def admits(self, scope: str | None, workspace_id: str | None) -> bool:
        if self.scopes and scope not in {s.value for s in self.scopes}:
            return False
        return not (
            self.workspace_ids
            and workspace_id is not None
            and workspace_id not in self.workspace_ids
        )

    def params(self) -> tuple[str, str]:
        return (
            json.dumps(sorted(s.value for s in self.scopes)),
            json.dumps(sorted(self.workspace_ids)),
        )


@dataclass(frozen=True)
class Manifest:
    """What `manifest.json` says about an archive; `to_dict` is exactly that file's content."""

    format_version: int
    created_at: int
    cairn_version: str
    schema_version: str
    filters: dict[str, Any]
    left_out: dict[str, int]
    counts: dict[str, Any]
    files: dict[str, dict[str, Any]]
    audit: dict[str, Any] = field(default_factory=dict)  # what the audit log could not hold
    # {id, path, memories}: workspaces of an old store whose folder's name holds a control
    # character - no Cairn registers one since 2026-11-30, so an import keeps their memories out
    # (in the file only when there are some)
    workspaces_not_importable: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        unclean = (
            {"workspaces_not_importable": [dict(w) for w in self.workspaces_not_importable]}
            if self.workspaces_not_importable
            else {}
        )
        return unclean | {
            "format": FORMAT,
            "format_version": self.format_version,
            "created_at": self.created_at,
            "cairn_version": self.cairn_version,
            "schema_version": self.schema_version,
            "filters": self.filters,
            "left_out": self.left_out,
            "counts": self.counts,
            "files": self.files,
            "audit": self.audit,
        }


def holds_a_manifest(path: Path) -> bool:
    """Whether `path` is an archive Cairn wrote: a zip file with its manifest at the top (any
    zip file used to count, so an export replaced a .docx or someone's photos.zip)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return MANIFEST in zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return False
