"""`cairn serve`, `status`, `health`, `paths`, `reindex`, `stop` and `mcp`: running Cairn (with
no windows, or for one MCP client), and asking how the running one is.

`serve` and `reindex` (while Cairn is stopped) open the store here, `paths` only says where it is;
`status` and `stop` never start a Cairn, `health` starts one as an agent's command does.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from collections.abc import Callable
from typing import Any

from core.cli_flags import command
from core.client import Client
from core.paths import resolve_paths
from core.terminal import (
    EXIT_OK,
    at_terminal,
    connect,
    connect_as_person,
    emit,
    when,
    working_folder,
)
from core.wording import plural


def add_parsers(sub: Any) -> None:
    serve = command(
        sub,
        "serve",
        "run the headless Cairn daemon in the foreground",
        connects=False,
        answers=False,
    )
    serve.add_argument(
        "--janitor-interval",
        type=_janitor_interval,
        default=3600.0,
        metavar="SECONDS",
        help="how often housekeeping runs, from every 1 s to at most 86400 s (a day) "
        "(default: hourly)",
    )
    command(sub, "status", "is Cairn running, where, and what it holds", connects=False)
    command(sub, "health", "the health snapshot (at a terminal: yours; --agent: an agent's)")
    command(sub, "paths", "print where Cairn keeps its files", connects=False)
    command(
        sub,
        "reindex",
        "rebuild the search index from the memory tables (Cairn must be stopped)",
        connects=False,
    )
    command(sub, "stop", "stop the running Cairn (asks you to confirm)", connects=False)
    mcp_help = "serve Cairn to an MCP client over stdio"
    mcp = sub.add_parser("mcp", help=mcp_help, description=mcp_help)
    mcp.add_argument("--agent", help="agent name (default: mcp-<the MCP client's name>)")
    mcp.add_argument("--workspace", help="workspace (default: the client's root, else the cwd)")


JANITOR_INTERVAL_MAX_S = 86_400


def _janitor_interval(text: str) -> float:
    """`--janitor-interval`: 0 made housekeeping run back to back, a core at 100%; inf (or 1e300)
    ran it once and never again - no purges, no scheduled backups, no daily integrity check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a finite number of seconds; "
            f"give 1 to {JANITOR_INTERVAL_MAX_S} (a day)"
        )
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} s is too short; give 1 s or more")
    if value > JANITOR_INTERVAL_MAX_S:
        raise argparse.ArgumentTypeError(
            f"{text} s is too long; give at most {JANITOR_INTERVAL_MAX_S} s (a day)"
        )
    return value


def configure_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def cmd_paths(args: argparse.Namespace) -> int:
    paths = resolve_paths().as_dict()

    def human() -> None:
        for name, value in paths.items():
            print(f"{name:9} {value}")

    emit(args, paths, human)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from core.daemon import serve_forever

    configure_logging()
    serve_forever(resolve_paths(), janitor_interval=args.janitor_interval)
    return EXIT_OK


def cmd_health(args: argparse.Namespace) -> int:
    as_person = args.agent is None and at_terminal()
    # a person's snapshot is the whole store's (no workspace); an agent's depends on its own
    with connect(args, as_person=as_person) as client:
        snapshot = client.call("health.get")

    def lines(value: Any, indent: str = "") -> None:
        for key, item in value.items():
            if isinstance(item, dict) and item:
                print(f"{indent}{key}:")
                lines(item, indent + "  ")
            elif isinstance(item, list) and item:  # e.g. notes_errors: one entry a line
                print(f"{indent}{key}:")
                for entry in item:
                    if isinstance(entry, dict):
                        print(f"{indent}  - " + ", ".join(f"{k}: {v}" for k, v in entry.items()))
                    else:
                        print(f"{indent}  - {entry}")
            elif key in ("last_write", "last_search", "last_seen", "at") and item:
                print(f"{indent}{key}: {when(int(item))}")
            else:
                print(f"{indent}{key}: {'-' if item in (None, {}, []) else item}")

    # Warnings first: under the counters a person who reads the top saw none of them (until
    # 2026-12-02); the Health window shows them first too. --json keeps the snapshot's order.
    first = {"warnings": snapshot["warnings"]} if "warnings" in snapshot else {}
    emit(args, snapshot, lambda: lines(first | snapshot))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from core.errors import NotRunning

    paths = resolve_paths()
    try:
        # At a terminal it is a person asking (whole-store counts, no workspace: binding the
        # folder would register it); otherwise an agent's share, which its folder's is part of.
        person = at_terminal()
        with Client.connect(
            paths,
            autostart=False,
            agent="cli",
            role="human" if person else "agent",
            workspace=None if person else working_folder(needed=False),
        ) as client:
            status = client.call("status") | {"running": True}
    except NotRunning:
        from core.runtime import socket_path

        data = {"running": False, "socket": str(socket_path(paths))}
        emit(args, data, lambda: print(f"Cairn is not running (socket {data['socket']})"))
        return NotRunning.code.exit_status
    by_scope = ", ".join(f"{k} {v}" for k, v in sorted(status["by_scope"].items())) or "none"
    emit(
        args,
        status,
        lambda: print(
            f"Cairn {status['version']} is running (pid {status['pid']})\n"
            f"socket    {status['socket']}\ndatabase  {status['database']}\n"
            f"memories  {status['memories']} ({by_scope})"
            + (f", {status['expired']} expired" if status.get("expired") else "")
            + "\n"
            f"agents' tokens in {status['token_store']}"
            + (
                f"\nreview    {status['review_pending']} waiting"
                if status["review_pending"]
                else ""
            )
            + ("\ncapture   PAUSED" if status["capture_paused"] else "")
            + "".join(f"\nwarning   {w}" for w in status["warnings"].values())
        ),
    )
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    from core.app import Cairn
    from core.terminal import WHERE_CAIRN_LOOKS, refuse_without_store

    paths = resolve_paths()
    # An index of no store is none to rebuild: opening it would create an empty store (until
    # 2026-11-30 it did, and said "reindexed 0 memories").
    refuse_without_store(paths, f"nothing to reindex - {WHERE_CAIRN_LOOKS}")
    cairn = Cairn.open(paths)
    try:
        started = time.perf_counter()
        from core import search_index  # see core.terminal's _LATER

        count = cairn.store.writer.run(lambda tx: search_index.rebuild(tx.conn))
        took = time.perf_counter() - started
    finally:
        cairn.close()
    emit(
        args,
        {"reindexed": count, "seconds": round(took, 3)},
        lambda: print(f"reindexed {plural(count, 'memory', 'memories')} in {took:.2f} s"),
    )
    return EXIT_OK


def cmd_stop(args: argparse.Namespace) -> int:
    from core.errors import NotRunning
    from core.runtime import probe, socket_path

    path = socket_path(resolve_paths())
    if not probe(path):
        raise NotRunning(f"Cairn is not running (nothing answers on {path})")
    with connect_as_person(  # never start Cairn just to stop it
        "Stop the running Cairn? Agents will lose their connections.", "stop", autostart=False
    ) as client:
        client.call("daemon.shutdown")
    emit(args, {"stopping": True}, lambda: print("Cairn is stopping"))
    return EXIT_OK


def cmd_mcp(args: argparse.Namespace) -> int:
    from core import mcp_bridge  # the MCP SDK loads only for this command

    return mcp_bridge.run(args)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": cmd_serve,
    "status": cmd_status,
    "health": cmd_health,
    "paths": cmd_paths,
    "reindex": cmd_reindex,
    "stop": cmd_stop,
    "mcp": cmd_mcp,
}
