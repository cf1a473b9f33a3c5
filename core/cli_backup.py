"""`cairn backup` and `cairn restore`: a person's backups from a terminal.

Taking or listing backups needs an interactive terminal; restoring one also asks the person to
type `restore`, and only works while Cairn is stopped. When Cairn runs, only it holds the store,
so `cairn backup` asks it to take the backup (`backup.create`); otherwise it opens the store here.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.backup_folder import list_backups, newest_backup
from core.paths import Paths, resolve_paths
from core.terminal import (
    WHERE_CAIRN_LOOKS,
    confirm,
    emit,
    for_a_person,
    served_or_here,
    when,
)
from core.wording import plural


def add_parsers(sub: Any) -> None:
    backup = sub.add_parser(
        "backup",
        help="back up your memories now, or list the backups (--list)",
        description="Back up your memories now (into the backups directory), or list the "
        "backups. Needs an interactive terminal.",
    )
    backup.add_argument(
        "--list", action="store_true", dest="list_backups", help="list the backups, newest first"
    )
    restore_parser = sub.add_parser(
        "restore",
        help="replace your memory database with a backup (Cairn must be stopped; you type to "
        "confirm)",
        description="Replace your memory database with a backup. Cairn must be stopped "
        "(`cairn stop`); the database it replaces is kept next to it as cairn.db.replaced-<time>.",
    )
    which = restore_parser.add_mutually_exclusive_group(required=True)
    which.add_argument("file", nargs="?", help="the backup file to restore")
    which.add_argument("--latest", action="store_true", help="restore the newest backup")
    for p in (backup, restore_parser):
        p.add_argument("--json", action="store_true", help="print JSON")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = n / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def _create(paths: Paths) -> dict[str, Any]:
    """A backup taken by the running Cairn, or here when none runs."""
    return served_or_here(
        paths,
        "backup.create",
        {},
        lambda cairn: cairn.backups.backup("manual").to_dict(),
        # a backup of the empty store opening it would make is none (until 2026-11-30 it was)
        if_no_store=f"nothing to back up - {WHERE_CAIRN_LOOKS}",
    )


def cmd_backup(args: argparse.Namespace) -> int:
    paths = resolve_paths()
    if args.list_backups:
        for_a_person("backup --list")
        items = [b.to_dict() for b in list_backups(paths.backups)]

        def listing() -> None:
            if not items:
                print(f"no backups yet in {paths.backups}")
                return
            print(f"backups in {paths.backups}, newest first:")
            for b in items:
                print(
                    f"{when(b['created_at'])}  {b['reason']:26} {_size(b['size']):>9}  {b['name']}"
                )

        emit(args, items, listing)
        return 0
    for_a_person("backup")
    info = _create(paths)
    emit(args, info, lambda: print(f"backed up to {info['path']} ({_size(info['size'])})"))
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    from core.restore import check_backup, refuse_while_running, restore  # core.terminal's _LATER

    for_a_person("restore")
    paths = resolve_paths()
    if args.latest:
        source = newest_backup(paths.backups)
    else:
        source = Path(os.path.abspath(os.path.expanduser(args.file)))
    # Before asking: whether Cairn runs, then the file itself (a damaged one, or no database,
    # was refused after the person typed `restore` until 2026-12-01); `restore` checks both
    # again, holding the lock.
    refuse_while_running(paths)
    check_backup(paths, source)
    confirm(
        f"Replace your memory database {paths.database} with the backup {source}?\n"
        "The database it replaces is kept next to it as cairn.db.replaced-<time>.",
        "restore",
    )
    report = restore(paths, source).to_dict()

    def human() -> None:
        print(
            f"restored {report['restored_from']}\n"
            f"  taken {when(report['backup_created_at'])}, schema {report['schema']}, "
            f"{plural(report['memories'], 'memory', 'memories')}\n"
            f"  into {report['database']}"
        )
        if report["replaced"]:
            print(f"the database it replaced is kept as {report['replaced']}")
        if report["audit_brought_back"]:
            back = report["audit_brought_back"]
            came = Path(back[0]).parent / Path(report["restored_from"]).name.removeprefix(
                "cairn.db."
            )
            print(
                f"{plural(len(back), 'rotated audit file')} of the restored database brought "
                f"back from {came}"
            )
        if report["audit_set_aside"]:
            folder = Path(report["audit_set_aside"][0]).parent
            print(
                f"{plural(len(report['audit_set_aside']), 'rotated audit file')} of the database "
                f"it replaced moved to {folder} (kept, and named by `cairn export`)"
            )

    emit(args, report, human)
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "backup": cmd_backup,
    "restore": cmd_restore,
}
