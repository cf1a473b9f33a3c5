"""`cairn workspace`: the project folders Cairn knows, and - when a repository moved or two
workspaces are one project - moving or merging them (a person's command, typed confirmation)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from core.terminal import connect_as_person, emit, looking_as_person, when
from core.wording import plural
from core.workspace import canonical_path


def add_parsers(sub: Any) -> None:
    workspace = sub.add_parser("workspace", help="list, move or merge workspaces")
    actions = workspace.add_subparsers(dest="workspace_command", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every workspace, its folder and its memories")
    move = actions.add_parser("move", help="a project moved: OLD (path or id) now lives at NEW")
    move.add_argument("old", help="the workspace: its id (ws_...) or its old folder")
    move.add_argument("new", help="the folder it lives in now")
    merge = actions.add_parser("merge", help="fold workspace FROM into INTO (a revision each)")
    merge.add_argument("source", metavar="FROM", help="the workspace folded in (id or folder)")
    merge.add_argument("into", metavar="INTO", help="the workspace it joins (id or folder)")
    for p in (listing, move, merge):
        p.add_argument("--json", action="store_true", help="print JSON")


def cmd_workspace(args: argparse.Namespace) -> int:
    action = args.workspace_command
    if action == "list":
        with looking_as_person("workspace list", bind_cwd=False) as client:
            rows = client.call("workspace.list")["workspaces"]

        def table() -> None:
            for w in rows:
                gone = "" if w["exists"] else "  (folder missing)"
                noun = "memory  " if w["memories"] == 1 else "memories"  # the columns align
                print(
                    f"{w['id']}  {w['memories']:5} {noun}  since {when(w['created_at'])}  "
                    f"{w['path']}{gone}"
                )

        emit(args, rows, table)
        return 0
    if action == "move":
        new = os.path.abspath(os.path.expanduser(args.new))
        canonical_path(new)  # a folder that is not there is refused before the confirmation
        with connect_as_person(
            f"Move workspace {args.old} to {new}?", "move", bind_cwd=False
        ) as client:
            result = client.call("workspace.move", {"workspace": args.old, "to": new})
        emit(args, result, lambda: print(f"{result['id']} now lives at {result['to']}"))
        return 0
    with connect_as_person(
        f"Merge workspace {args.source} into {args.into}? Each memory moves with a revision.",
        "merge",
        bind_cwd=False,
    ) as client:
        result = client.call("workspace.merge", {"workspace": args.source, "into": args.into})

    def report() -> None:
        moved = plural(result["moved"], "memory", "memories")
        print(f"moved {moved} from {result['from']} into {result['into']}")
        for kept in result["kept"]:
            print(f"  kept {kept['id']}: {kept['reason']}")

    emit(args, result, report)
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"workspace": cmd_workspace}
