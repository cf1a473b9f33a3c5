"""`cairn agent`: registering, listing, pausing, resuming and revoking agents - a person's
commands (at a terminal, a typed confirmation for every change; without one, the tray asks)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from core.terminal import EXIT_OK, connect_as_person, emit, looking_as_person, when


def add_parsers(sub: Any) -> None:
    agent = sub.add_parser("agent", help="register, list, pause, resume or revoke agents")
    agent_sub = agent.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    for action, text in (
        ("add", "register an agent and show its token once"),
        ("list", "list agents"),
        ("pause", "refuse an agent's requests until resumed"),
        ("resume", "let a paused agent work again"),
        ("revoke", "revoke an agent and delete its token"),
    ):
        p = agent_sub.add_parser(action, help=text, description=text)
        p.add_argument("--json", action="store_true", help="print JSON")
        if action != "list":
            p.add_argument("name", help="the agent's name (lower-case letters, digits, - _ .)")


def cmd_agent(args: argparse.Namespace) -> int:
    action = args.agent_command
    if action == "list":
        with looking_as_person("agent list") as client:
            agents = client.call("agent.list")["agents"]

        def human() -> None:
            for a in agents:
                token = "token" if a["has_token"] else "no token"
                print(
                    f"{a['name']:24} {a['status']:8} {token:9} last seen {when(a['last_seen_at'])}"
                )

        emit(args, agents, human)
        return EXIT_OK
    from core.agents import check_name  # see core.terminal's _LATER

    check_name(args.name)  # a name Cairn would refuse is refused before the confirmation
    prompts = {
        "add": f"Register agent {args.name!r} and issue it a token?",
        "pause": f"Pause agent {args.name!r}? Its requests will be refused until you resume it.",
        "resume": f"Let agent {args.name!r} work again?",
        "revoke": f"Revoke agent {args.name!r}? Its token stops working and is deleted.",
    }
    with connect_as_person(prompts[action], f"{action} {args.name}") as client:
        result = client.call(f"agent.{action}", {"name": args.name})

    def report() -> None:
        if action == "add":
            print(
                f"agent {result['name']} registered. Its token (shown once; also kept in "
                f"{result['stored_in']}):\n{result['token']}"
            )
        else:
            print(f"agent {result['name']} is now {result['status']}")

    emit(args, result, report)
    return EXIT_OK


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"agent": cmd_agent}
