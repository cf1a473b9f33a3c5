"""The `cairn` command line: the parser each group of commands adds to, and the one error edge
(exit statuses are in `core.terminal`).

Every command except `serve`, `paths` and `reindex` talks to the running Cairn through the socket
client (starting the headless daemon when none runs). Ordinary commands connect as an agent
(`--agent`, default `cli`, verified when its token is in the token store). `add` typed at a
terminal with no agent named is the person's own write (author tier `human`), and `forget` there
is the person's, after a typed confirmation. People's commands (`agent ...`, `stop`, `review`,
`policy`, ...) connect as a person and need an interactive terminal; those that change something
ask for a typed confirmation too - no flag skips it (`agent list` and `review list` only look). The
commands live in `core/cli_*.py`, one module per group, each with `add_parsers` and `HANDLERS`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

from core import (
    __version__,
    cli_agents,
    cli_archive,
    cli_autostart,
    cli_backup,
    cli_daemon,
    cli_identity,
    cli_memory,
    cli_policy,
    cli_review,
    cli_workspace,
)
from core.errors import CairnError
from core.terminal import EXIT_FAILED, EXIT_OK, NotConfirmed, exit_status
from core.wording import visible

EXIT_INTERRUPTED = 130

# The groups in the order `cairn --help` lists their commands.
GROUPS = (
    cli_daemon,
    cli_memory,
    cli_agents,
    cli_review,
    cli_policy,
    cli_backup,
    cli_archive,
    cli_identity,
    cli_workspace,
    cli_autostart,
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn",
        description="Cairn: local long-term memory for AI agents, with a person in charge. "
        "With no command, `cairn` starts the tray application (the windows and the agents' "
        "socket); `cairn serve` is Cairn without windows.",
    )
    parser.add_argument("--version", action="version", version=f"cairn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for group in GROUPS:
        group.add_parsers(sub)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Every command's `--help` starts with what it does: a subcommand with no description of
    its own gets the line its parent's listing shows for it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            said = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if sub.description is None and said.get(name):
                    sub.description = said[name]
                _describe(sub)


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    name: handler for group in GROUPS for name, handler in group.HANDLERS.items()
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["serve"])
    if args.command not in ("serve", "mcp"):  # those log with times; a command says "cairn: "
        logging.basicConfig(
            level=logging.WARNING, format="cairn: %(levelname)s: %(message)s", stream=sys.stderr
        )
    try:
        return HANDLERS[args.command](args)
    except NotConfirmed as e:
        print(f"cairn: {visible(e.message)}", file=sys.stderr)
        return EXIT_FAILED
    except CairnError as e:
        # an error names what it was given (an id, a name, a path): shown, never obeyed
        print(f"cairn: {visible(e.message)}", file=sys.stderr)
        return exit_status(e)  # a secret is 77 wherever it was found
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
