"""`cairn export` and `cairn import`: a person's archive of their memories, from a terminal.

Both need an interactive terminal; `import` also asks the person to type `import` (`--dry-run`
only reads, so it does not ask). No flag skips either: an agent with a shell must not be able to
pour memories in as the person's own. When Cairn runs, only it holds the store, so both ask it
(`archive.export`, `archive.import` on a person's connection); otherwise they open the store here
and call the same service.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.model import RESERVED_AGENT_NAMES, Caller, Scope, Surface
from core.paths import resolve_paths
from core.terminal import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    WHERE_CAIRN_LOOKS,
    confirm,
    emit,
    for_a_person,
    served_or_here,
    when,
    working_folder,
)
from core.wording import plural, visible

if TYPE_CHECKING:
    from core.app import Cairn
    from core.archive import ArchiveService

    _Local = Callable[[ArchiveService, Caller], dict[str, Any]]

# The archive's code (the whole engine behind it) is imported by the commands that use it:
# imported here, every `cairn` command took 0.9 s more to start (until 2026-12-02).

# An export or import of a large store takes a while; the default client timeout is 30 s.
TIMEOUT_S = 3600.0


def add_parsers(sub: Any) -> None:
    export = sub.add_parser(
        "export",
        help="write your memories, their history, identity and more into one archive file",
        description="Write every memory with all its revisions and relations, the identity "
        "documents' history, the review queue, the audit log, the capture policy, workspaces "
        "and tombstones into one zip archive (owner-only). Forgotten memories appear only as "
        "tombstones. Needs an interactive terminal.",
    )
    export.add_argument("file", nargs="?", metavar="FILE", help="the archive to write")
    export.add_argument("--out", metavar="FILE", help="the same: the archive to write")
    export.add_argument(
        "--scope",
        action="append",
        default=[],
        dest="scopes",
        choices=[s.value for s in Scope],
        help="only memories of this scope (repeatable)",
    )
    export.add_argument(
        "--workspace",
        action="append",
        default=[],
        dest="workspaces",
        metavar="DIR",
        help="of the memories that belong to a workspace, only this one's (repeatable)",
    )
    imp = sub.add_parser(
        "import",
        help="bring an archive (or a JSON-lines file of memories) into your memories "
        "(you type to confirm)",
        description="Bring an archive from `cairn export` - or a file with one memory.write "
        "object per line - into your memories, as your own decision. A memory here gains the "
        "revisions the archive holds of it; a line with a memory's dedupe key updates it. "
        "Nothing is removed, and nothing you forgot comes back. Needs an interactive terminal "
        "and, unless --dry-run, a typed confirmation.",
    )
    imp.add_argument("file", help="the archive (.zip) or JSON-lines file")
    imp.add_argument(
        "--dry-run", action="store_true", help="report what would happen; change nothing"
    )
    for p in (export, imp):
        p.add_argument("--json", action="store_true", help="print JSON")


def _run(
    method: str, params: dict[str, Any], here: _Local, *, if_no_store: str | None = None
) -> dict[str, Any]:
    def local(cairn: Cairn) -> dict[str, Any]:
        # No workspace: the folder the command runs in is not registered by running it there.
        return here(cairn.archive, Caller(Surface.HUMAN))

    return served_or_here(
        resolve_paths(), method, params, local, timeout=TIMEOUT_S, if_no_store=if_no_store
    )


def cmd_export(args: argparse.Namespace) -> int:
    # `cairn export FILE`, as import and restore take theirs; --out was the only way until
    # 2026-12-02 and still works.
    if args.file is not None and args.out is not None:
        print("cairn export: give the archive once: FILE or --out FILE", file=sys.stderr)
        return EXIT_USAGE
    if not (args.file or args.out):  # neither, or an empty one
        print("cairn export: say where to write the archive: cairn export FILE", file=sys.stderr)
        return EXIT_USAGE
    for_a_person("export")
    out = Path(os.path.abspath(os.path.expanduser(args.file or args.out)))
    directories = [os.path.abspath(os.path.expanduser(d)) for d in args.workspaces]
    params: dict[str, Any] = {"out": str(out)}
    if args.scopes:
        params["scopes"] = args.scopes
    if directories:
        params["workspaces"] = directories

    def here(service: ArchiveService, person: Caller) -> dict[str, Any]:
        return service.export(
            person,
            out,
            scopes=frozenset(Scope(s) for s in args.scopes),
            workspace_ids=service.workspace_ids(directories),
        ).to_dict()

    # Nothing runs and no store exists: an export of the empty store opening it would make is
    # no export of the person's memories (until 2026-11-30 it was written, and exited 0).
    manifest = _run(
        "archive.export", params, here, if_no_store=f"nothing to export - {WHERE_CAIRN_LOOKS}"
    )
    emit(args, manifest, lambda: print(visible(describe_export(out, manifest))))
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from core.archive import import_source

    path = import_source(args.file)  # before the confirmation: no file, nothing to confirm
    if args.dry_run:
        for_a_person("import --dry-run")
    else:
        for_a_person("import")
        confirm(
            f"Import {visible(str(path))} into your memories, as your own decision?\n"
            f"{_changes(path)}",
            "import",
        )
    # Where a JSON-lines file's project lines without a `workspace` land (an archive brings
    # its own workspaces); the import registers it only when such a line lands. A deleted
    # folder is none: an archive needs none, and such a line says what to give instead.
    folder = working_folder(needed=False)
    params: dict[str, Any] = {"path": str(path)}
    if folder is not None:
        params["workspace"] = folder
    if args.dry_run:
        params["dry_run"] = True

    def here(service: ArchiveService, person: Caller) -> dict[str, Any]:
        return service.import_(person, path, dry_run=args.dry_run, workspace=folder).to_dict()

    # A dry run changes nothing, so with no Cairn running it does not create the store.
    empty = (
        "a dry run creates nothing. Start Cairn (`cairn serve`, or the tray) to create an "
        "empty store and preview against it, or import without --dry-run"
    )
    report = _run("archive.import", params, here, if_no_store=empty if args.dry_run else None)
    emit(args, report, lambda: print(visible(describe_import(report))))
    return EXIT_FAILED if report["errors"] or report["refused"] else EXIT_OK


# -- what a person reads -------------------------------------------------------------------------


_LEFT_OUT = {
    "memories": ("memory", "memories", " outside the filters"),
    "forgotten_memories": ("forgotten memory", "forgotten memories", " (tombstones only)"),
    "relations": ("relation", "relations", " to memories not in the archive"),
    "suggestions": ("proposal", "proposals", ""),
    "audit_events": ("audit event", "audit events", ""),
    "tombstones": ("tombstone", "tombstones", ""),
    "workspaces": ("workspace", "workspaces", ""),
}


def describe_export(out: Path, m: dict[str, Any]) -> str:
    counts, left = m["counts"], m["left_out"]
    files = counts["files"]
    scopes = ", ".join(f"{k} {v}" for k, v in counts["memories_by_scope"].items() if v) or "none"
    lines = [
        f"exported {plural(counts['memories'], 'memory', 'memories')} ({scopes}) with "
        f"{plural(counts['revisions'], 'revision')} and "
        f"{plural(counts['relations'], 'relation')}",
        f"  identity: {plural(counts['identity_documents'], 'document')} "
        f"({plural(counts['identity_versions'], 'version')}); review queue: "
        f"{plural(files.get('suggestions.jsonl', 0), 'proposal')}; audit: "
        f"{plural(files.get('audit.jsonl', 0), 'event')}; "
        f"{plural(files.get('tombstones.jsonl', 0), 'tombstone')}; "
        f"{plural(files.get('workspaces.jsonl', 0), 'workspace')}",
        f"  to {out} (owner-only)",
    ]
    if m["filters"]["scopes"] or m["filters"]["workspaces"]:
        where = [
            *m["filters"]["scopes"],
            *(w["path"] or w["id"] for w in m["filters"]["workspaces"]),
        ]
        lines.append(f"  filtered: {', '.join(where)}")
    gone = [
        plural(left[key], one, many) + why
        for key, (one, many, why) in _LEFT_OUT.items()
        if left.get(key)
    ]
    if gone:
        lines.append(f"  left out: {', '.join(gone)}")
    lines.extend(_audit_problems(m.get("audit") or {}))
    lines.extend(
        f"  warning: workspace {w['id']} ({w['path']}) holds a control character in its "
        f"folder's name: another Cairn does not take it, so its "
        f"{plural(w['memories'], 'memory', 'memories')} "
        f"{'is' if w['memories'] == 1 else 'are'} not imported there; move it to a clean folder "
        f"(`cairn workspace move {w['id']} NEW-FOLDER`) and export again"
        for w in m.get("workspaces_not_importable", ())
    )
    return "\n".join(lines)


def _runs(runs: list[list[int]], count: int) -> str:
    """[[3, 3], [5, 9]] -> `3, 5-9` (and how many more when the manifest lists only some)."""
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs[:20])
    shown = sum(b - a + 1 for a, b in runs[:20])
    return text + (f" and {count - shown} more" if count > shown else "")


def _audit_problems(a: dict[str, Any]) -> list[str]:
    """What the audit log in the archive could not hold (from the manifest's `audit`)."""
    lines = [
        f"  audit: {plural(bad['count'], 'line')} of the rotated file {bad['file']} could not be "
        f"read and {'was' if bad['count'] == 1 else 'were'} left out "
        f"({'line' if bad['count'] == 1 else 'lines'} {_runs(bad['lines'], bad['count'])})"
        for bad in a.get("unreadable_lines", [])
    ]
    missing = a.get("missing_seqs") or {}
    if missing.get("count"):
        lines.append(
            f"  audit: {plural(missing['count'], 'event')} missing (in no rotated file and not in "
            f"the database): seq {_runs(missing['ranges'], missing['count'])}"
        )
    other = a.get("other_history", [])
    if other:
        events = sum(int(f["events"]) for f in other)
        lines.append(
            f"  not included: {plural(events, 'audit event')} of another history (a replaced "
            "database), kept in the state directory's audit/ folder: "
            + ", ".join(f["file"] for f in other)
        )
    return lines


def _changes(path: Path) -> str:
    """What an import of `path` changes here, for the confirmation. (Until 2026-11-30 it said
    "Nothing already here is changed or removed", and a keyed line then rewrote its memory.)"""
    from core.archive_reader import is_archive

    try:
        archive = is_archive(path)
    except OSError:
        archive = False  # the import itself says why the file cannot be read
    if archive:
        return (
            "A memory here gains the revisions the archive holds of it and it lacks; one with "
            "another history is kept as it is.\nNothing is removed, and nothing you forgot "
            "comes back."
        )
    return (
        "A line with the dedupe key of a memory here updates that memory (a new revision; its "
        "history keeps the old one).\nNothing is removed, and nothing you forgot comes back."
    )


def describe_import(r: dict[str, Any]) -> str:
    lines: list[str] = []
    if r["source"] == "archive":
        a = r["archive"] or {}
        lines.append(
            f"import of {r['path']} (archive format {a.get('format_version')}, made "
            f"{when(a.get('created_at'))} by Cairn {a.get('cairn_version')})"
        )
    else:
        lines.append(f"import of {r['path']} (JSON lines)")
        lines.extend(f"  line {line['line']}: {_line(line)}" for line in r["lines"])
    # an archive appends its revisions to a memory; a JSON line's update is one revision each
    appended = (
        f" ({plural(r['updated_revisions'], 'revision')} appended)"
        if r["source"] == "archive"
        else ""
    )
    lines.append(
        f"memories: {r['added']} added, {r['updated']} updated{appended}, "
        f"{r['unchanged']} unchanged, "
        f"{r['skipped_forgotten']} forgotten (not brought back), "
        f"{plural(len(r['conflicts']), 'conflict')}"
        + (f", {r['refused']} refused, {r['errors']} not valid" if r["source"] == "jsonl" else "")
        + (
            f", {r['refused']} refused (a secret)"
            if r["source"] == "archive" and r["refused"]
            else ""
        )
    )
    if r["source"] == "archive":
        lines.append(
            f"relations: {r['relations_added']} added, {r['relations_unchanged']} unchanged, "
            f"{r['relations_skipped']} skipped; "
            f"identity: {plural(r['identity_added'], 'version')} added, "
            f"{r['identity_unchanged']} unchanged, {len(r['identity_conflicts'])} conflicting; "
            f"tombstones: {r['tombstones_added']} added; workspaces: {r['workspaces_added']} added"
        )
    lines.extend(f"  not brought back {i['id']}: {i['reason']}" for i in r["skipped"])
    lines.extend(f"  conflict {i['id']}: {i['reason']}" for i in r["conflicts"])
    lines.extend(f"  refused {i['id']}: {i['reason']}" for i in r["secrets"])
    lines.extend(f"  kept its old dedupe key {i['id']}: {i['reason']}" for i in r["keys_kept"])
    lines.extend(
        f"  released {i['id']}: {i['reason']} (it is no longer hidden behind it)"
        for i in r.get("released", ())
    )
    if r.get("notes_dropped"):
        lines.append(
            f"  {plural(r['notes_dropped'], 'note')} of relations or tombstones left out "
            "(a relation's note, a tombstone's reason, session id or who forgot its memory, "
            "which reads import): they held a secret or a control character (the relations and "
            "tombstones themselves were kept)"
        )
    lines.extend(
        f"  conflict {i['doc']} version {i['version']}: {i['reason']}"
        for i in r["identity_conflicts"]
    )
    lines.extend(
        f"  workspace {i['path']} is {i['id']} here ({i['archive_id']} in the archive)"
        for i in r["workspaces_remapped"]
    )
    lines.extend(
        f"  {i['what']} {i['was']!r} is {i['now']!r} here: {_why_renamed(i['was'])}"
        for i in r.get("names_renamed", ())
    )
    lines.extend(f"  not imported: {i}" for i in r["not_imported"])
    if r["dry_run"]:
        lines.append("dry run: nothing was changed")
    return "\n".join(lines)


def _why_renamed(was: str) -> str:
    """Why an old archive's name was renamed (`core/old_names.py`)."""
    if was in RESERVED_AGENT_NAMES:
        return "no agent may take a name Cairn keeps for itself (since 2026-11-30)"
    return "names may no longer end in a line break (since 2026-11-30)"


def _line(line: dict[str, Any]) -> str:
    status = line["status"]
    if status == "stored":
        where = f" {line['id']}@{line['revision']}" if line.get("id") else ""
        return f"{line['result']}{where}"
    if status == "error":
        return f"not valid ({line['error']}): {line['message']}"
    reason = line.get("reason") or ""
    return f"{status} ({line.get('reason_code')})" + (f": {reason}" if reason else "")


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "export": cmd_export,
    "import": cmd_import,
}
