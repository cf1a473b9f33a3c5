"""`cairn workspace`: the project folders Cairn knows, and - when a repository moved or two
workspaces are one project - moving or merging them (a person's command, typed confirmation)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from core.errors import InvalidInput
from core.terminal import at_terminal, connect_as_person, emit, looking_as_person, when
from core.wording import plural, visible


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
    from core.workspace import canonical_path, refuse_move_onto  # see core.terminal's _LATER

    action = args.workspace_command
    if action == "list":
        with looking_as_person("workspace list") as client:
            rows = client.call("workspace.list")["workspaces"]

        def table() -> None:
            # a folder registered before 2026-11-30 may hold a control character, and an id an
            # archive brought before 2026-11-30 an escape sequence: shown, not obeyed (until
            # then they reached the terminal)
            for w in rows:
                gone = "" if w["exists"] else "  (folder missing)"
                noun = "memory  " if w["memories"] == 1 else "memories"  # the columns align
                print(
                    f"{visible(w['id'])}  {w['memories']:5} {noun}  since {when(w['created_at'])}  "
                    f"{visible(w['path'])}{gone}"
                )

        emit(args, rows, table)
        return 0
    if action == "move":
        old = workspace_ref(args.old)
        new = os.path.abspath(os.path.expanduser(args.new))
        target = canonical_path(new)  # a folder that is not there is refused before asking
        if old in (new, target):  # so is a move onto itself (refused after it, until 2026-11-30)
            raise InvalidInput(f"workspace {old} is already at {target}: nothing to move")
        if at_terminal():
            # and a folder that is a workspace already - another one, or this one named by its
            # id (until 2026-11-30 after the typed confirmation, exit 67); without a terminal
            # the tray asks once and the running Cairn refuses the same after it
            with looking_as_person("workspace move") as client:
                known = client.call("workspace.list")["workspaces"]
            moving = next((w["id"] for w in known if old in (w["id"], w["path"])), None)
            holder = next(((w["id"], w["path"]) for w in known if w["path"] == target), None)
            if moving is not None:
                refuse_move_onto(old, moving, target, holder)
        with connect_as_person(
            f"Move workspace {visible(old)} to {visible(new)}?", "move"
        ) as client:
            result = client.call("workspace.move", {"workspace": old, "to": new})
        emit(args, result, lambda: print(visible(f"{result['id']} now lives at {result['to']}")))
        return 0
    source, into = workspace_ref(args.source), workspace_ref(args.into)
    if source == into:  # before the confirmation: there is nothing to merge
        raise InvalidInput(f"a workspace cannot be merged into itself ({source})")
    with connect_as_person(
        f"Merge workspace {visible(source)} into {visible(into)}? Each memory moves with a "
        "revision.",
        "merge",
    ) as client:
        result = client.call("workspace.merge", {"workspace": source, "into": into})

    def report() -> None:
        moved = plural(result["moved"], "memory", "memories")
        print(visible(f"moved {moved} from {result['from']} into {result['into']}"))
        for kept in result["kept"]:
            print(visible(f"  kept {kept['id']}: {kept['reason']}"))

    emit(args, result, report)
    return 0


def workspace_ref(raw: str) -> str:
    """A workspace as the person named it: an id (`ws_...`) as it is, a folder as an absolute
    path read from where the person is - the running Cairn was started elsewhere, and refuses a
    relative one. (Until 2026-11-30 `merge a b` went as typed and was read from Cairn's folder.)"""
    from core.workspace import WORKSPACE_ID_PREFIX

    if raw.startswith(WORKSPACE_ID_PREFIX) and os.sep not in raw and not os.path.exists(raw):
        return raw
    return os.path.abspath(os.path.expanduser(raw))


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"workspace": cmd_workspace}
