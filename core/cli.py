"""The `cairn` command line: argument parsing, the one error edge, and named exit codes."""

from __future__ import annotations

import argparse
import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Sequence

from core import __version__, search_index
from core.app import Cairn
from core.errors import CairnError
from core.janitor import Janitor
from core.paths import resolve_paths

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

log = logging.getLogger("cairn")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn", description="Cairn: local long-term memory for AI agents."
    )
    parser.add_argument("--version", action="version", version=f"cairn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser("serve", help="run the headless Cairn daemon in the foreground")
    serve.add_argument(
        "--janitor-interval",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how often housekeeping runs (default: hourly)",
    )
    sub.add_parser(
        "reindex", help="rebuild the search index from the memory tables (Cairn must be stopped)"
    )
    paths = sub.add_parser("paths", help="print where Cairn keeps its files")
    paths.add_argument("--json", action="store_true", help="print JSON")
    return parser


def configure_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def cmd_paths(args: argparse.Namespace) -> int:
    paths = resolve_paths()
    if args.json:
        print(json.dumps(paths.as_dict(), indent=2))
    else:
        for name, value in paths.as_dict().items():
            print(f"{name:9} {value}")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    configure_logging()
    cairn = Cairn.open(resolve_paths())
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("received %s, stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        log.info("Cairn %s serving the store at %s", __version__, cairn.paths.database)
        janitor = Janitor(cairn.store, cairn.memories, cairn.settings, cairn.paths)
        while not stop.is_set():
            janitor.run()
            stop.wait(args.janitor_interval)
    finally:
        cairn.close()
        log.info("Cairn stopped")
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    cairn = Cairn.open(resolve_paths())
    try:
        started = time.perf_counter()
        count = cairn.store.writer.run(lambda tx: search_index.rebuild(tx.conn))
        print(f"reindexed {count} memories in {time.perf_counter() - started:.2f} s")
    finally:
        cairn.close()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = args.command or "serve"
    if args.command is None:
        args = parser.parse_args(["serve"])
    handlers = {"serve": cmd_serve, "paths": cmd_paths, "reindex": cmd_reindex}
    try:
        return handlers[command](args)
    except CairnError as e:
        print(f"cairn: {e.message}", file=sys.stderr)
        return e.code.exit_status
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
