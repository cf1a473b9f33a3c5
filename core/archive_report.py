"""What an import reports: the counts and details of bringing an archive - or a JSON-lines file
of memories - into a store (or of a dry run), and the tally that fills them in as it decides."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

NOT_IMPORTED = (
    "suggestions.jsonl: the other store's review queue stays in the archive",
    "audit.jsonl: the other store's history stays in the archive (this store records the import)",
    "policy.toml: your capture policy stays as it is (copy the file over yours to adopt it)",
)


@dataclass(frozen=True)
class ImportReport:
    """What an import did - or, for a dry run, would do. Counts are memories unless named."""

    source: str  # "archive" or "jsonl"
    path: str
    dry_run: bool
    added: int = 0
    updated: int = 0
    updated_revisions: int = 0  # revisions appended to memories this store already had
    unchanged: int = 0
    skipped_forgotten: int = 0
    refused: int = 0  # refused by the gate: a secret (jsonl lines; archive memories)
    errors: int = 0  # jsonl: lines that are not a valid write
    skipped: tuple[dict[str, str], ...] = ()  # {id, reason}: forgotten, never brought back
    conflicts: tuple[dict[str, str], ...] = ()  # {id, reason}: this store's copy was kept
    # {id, reason}: archive memories holding a secret, and relations (id `FROM KIND TO`) whose
    # created_by or resolved_by holds one - each left out (`refused` counts the memories)
    secrets: tuple[dict[str, str], ...] = ()
    renamed: tuple[dict[str, str], ...] = ()  # {archive_id, id}: dedupe-key ids of a moved path
    # {id, reason}: an old store's dedupe key that reads as one another memory holds, kept as it
    # was (as schema 2.3 keeps it in a live store, `core/old_keys.py`)
    keys_kept: tuple[dict[str, str], ...] = ()
    # {what, was, now}: an agent's name or a kind that ended in a line break (an export from
    # before 2026-11-30), given the name this store gave it or would give it
    names_renamed: tuple[dict[str, str], ...] = ()
    # {id, reason}: imported superseded by a memory not live here, so given back its place
    released: tuple[dict[str, str], ...] = ()
    relations_added: int = 0
    relations_unchanged: int = 0
    relations_skipped: int = 0  # an end is not in this store (forgotten, or left out)
    # a relation's note, a tombstone's reason or session id holding a secret (or a control
    # character) - left out, the relation or tombstone kept; a tombstone's forgotten_by holding
    # one, which reads `import` instead
    notes_dropped: int = 0
    identity_added: int = 0
    identity_unchanged: int = 0
    identity_conflicts: tuple[dict[str, Any], ...] = ()  # {doc, version, reason}
    tombstones_added: int = 0
    tombstones_unchanged: int = 0
    workspaces_added: int = 0
    workspaces_remapped: tuple[dict[str, str], ...] = ()  # {path, archive_id, id}
    lines: tuple[dict[str, Any], ...] = ()  # jsonl: each line's outcome, in order
    archive: dict[str, Any] | None = None  # the archive's format, time, versions and filters
    not_imported: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            out[name] = (
                [v if isinstance(v, str) else dict(v) for v in value]
                if isinstance(value, tuple)
                else value
            )
        return out


@dataclass
class Tally:
    """An ImportReport being filled in."""

    source: str
    path: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    added_ids: set[str] = field(default_factory=set)

    def count(self, name: str, by: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + by

    def note(self, name: str, item: dict[str, Any]) -> None:
        self.details.setdefault(name, []).append(item)

    def report(
        self, *, archive: dict[str, Any] | None = None, lines: Sequence[dict[str, Any]] = ()
    ) -> ImportReport:
        return ImportReport(
            source=self.source,
            path=self.path,
            dry_run=self.dry_run,
            **self.counts,  # type: ignore[arg-type]
            **{k: tuple(v) for k, v in self.details.items()},  # type: ignore[arg-type]
            lines=tuple(lines),
            archive=archive,
            not_imported=NOT_IMPORTED if self.source == "archive" else (),
        )
