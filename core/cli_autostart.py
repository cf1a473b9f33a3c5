"""`cairn autostart enable [--headless] | disable | status`: Cairn starting with your session.

The tray application is what starts with a desktop session; `--headless` chooses the headless
daemon instead, for machines without a desktop. Never both: enabling one removes the other, and
says so. These commands only write or remove the entry; they start and stop nothing.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from core.autostart import Autostart, Report
from core.autostart_entries import Kind
from core.terminal import emit


def add_parsers(sub: Any) -> None:
    autostart = sub.add_parser(
        "autostart",
        help="start Cairn when you log in (the tray, or --headless the daemon), or stop doing so",
        description="Start Cairn when you log in: the tray application, or with --headless the "
        "headless daemon for machines without a desktop - never both. Only the per-user entry "
        "is written or removed; nothing is started or stopped now.",
    )
    actions = autostart.add_subparsers(dest="autostart_command", metavar="ACTION", required=True)
    enable = actions.add_parser(
        "enable",
        help="start the tray application at login (--headless: the headless daemon)",
        description="Start Cairn at login: the tray application, or with --headless the "
        "headless daemon. The other kind's entry, if any, is removed.",
    )
    enable.add_argument(
        "--headless",
        action="store_true",
        help="start the headless daemon (`cairn serve`) instead of the tray application",
    )
    actions.add_parser(
        "disable",
        help="stop starting Cairn at login (a running Cairn keeps running)",
        description="Remove Cairn's autostart entries. A running Cairn keeps running; "
        "`cairn stop` stops it.",
    )
    actions.add_parser("status", help="which autostart entry is enabled, and where its file is")
    for p in actions.choices.values():
        p.add_argument("--json", action="store_true", help="print JSON")


def _print_notes(report: Report) -> None:
    for note in report.notes:
        print(f"note: {note}")


def _print_enabled(report: Report) -> None:
    for found in report.enabled:
        print(f"enabled: {found.kind.title} starts when you log in")
        print(f"  file  {found.path}")


def cmd_autostart(args: argparse.Namespace) -> int:
    autostart = Autostart.here()
    action = args.autostart_command
    if action == "enable":
        kind = Kind.HEADLESS if args.headless else Kind.TRAY
        report = autostart.enable(kind)

        def enabled() -> None:
            for gone in report.removed:
                print(
                    f"disabled {gone.kind.title} (removed {gone.path}): "
                    f"only one of the two starts with your session"
                )
            _print_enabled(report)
            print("  takes effect at your next login; nothing was started now")
            _print_notes(report)

        emit(args, report.to_dict(), enabled)
        return 0
    if action == "disable":
        report = autostart.disable()

        def disabled() -> None:
            if not report.removed:
                print("autostart was not enabled; nothing to remove")
            for gone in report.removed:
                print(f"disabled {gone.kind.title} (removed {gone.path})")
            if report.removed:
                print("  a Cairn running now keeps running; `cairn stop` stops it")
            _print_notes(report)

        emit(args, report.to_dict(), disabled)
        return 0
    report = autostart.status()

    def status() -> None:
        if not report.enabled:
            print(
                "autostart: off - Cairn starts when you run `cairn`, or when an agent needs it; "
                "`cairn autostart enable` starts the tray at login"
            )
            print(f"  the tray's entry would be  {autostart.where.tray}")
            print(f"  the headless unit would be {autostart.where.headless}")
        _print_enabled(report)
        _print_notes(report)

    emit(args, report.to_dict(), status)
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"autostart": cmd_autostart}
