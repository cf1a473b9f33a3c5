"""The flags many `cairn` commands share (docs/cli.md's Common flags): `--json`, and an agent's
connection - `--agent`, `--workspace`, `--session`."""

from __future__ import annotations

import argparse
from typing import Any


def command(
    sub: Any, name: str, help_text: str, *, connects: bool = True, answers: bool = True
) -> argparse.ArgumentParser:
    """A command's parser in `sub`, its `--help` opening with `help_text`: with `--json` when it
    `answers`, with the agent's connection flags when it `connects`."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help_text, description=help_text)
    if answers:  # a command that prints an answer can print it as JSON
        p.add_argument("--json", action="store_true", help="print JSON")
    if connects:
        p.add_argument(
            "--agent", help="agent name for this connection (default: $CAIRN_AGENT or cli)"
        )
        p.add_argument(
            "--workspace", default=None, help="workspace directory (default: the current one)"
        )
        p.add_argument("--session", help="session id for session-scoped memories")
    return p
