"""`cairn policy`: the capture policy shown, or one of its settings changed, from a terminal.

`policy show` needs an interactive terminal; `policy set` also asks the person to type what they
decide - no flag skips it. Agents read the policy that applies to them with
`cairn policy show --agent NAME`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from core.errors import CairnError, InvalidInput
from core.paths import resolve_paths
from core.settings import load_settings
from core.terminal import connect_as_agent, connect_as_person, emit, looking_as_person
from core.validation import Limits
from core.wording import visible


def add_parsers(sub: Any) -> None:
    policy = sub.add_parser("policy", help="show or change the capture policy")
    policy_sub = policy.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    shown = policy_sub.add_parser(
        "show", help="the policy in effect (as an agent sees it with --agent)"
    )
    shown.add_argument("--agent", help="show what the policy means for this agent")
    setting = policy_sub.add_parser(
        "set",
        help="change one setting (you type to confirm): kinds.idea auto, scopes.user ask, "
        "paused true, agents.NAME.kinds.fact auto ...",
    )
    setting.add_argument(
        "setting", help="paused, kinds.KIND, scopes.SCOPE, extracted or agents.NAME.RULE"
    )
    setting.add_argument("value", help="auto, ask or off (paused: true or false)")
    for p in (shown, setting):
        p.add_argument("--json", action="store_true", help="print JSON")


def _known_kinds() -> tuple[str, ...]:
    """The kinds Cairn takes: the built-in ones and `memory.extra_kinds` from the settings; none
    when the settings file cannot be read (the running Cairn judges then)."""
    try:
        return Limits(load_settings(resolve_paths().settings_file)).kinds
    except CairnError:
        return ()


def cmd_policy(args: argparse.Namespace) -> int:
    if args.policy_command == "show":
        if args.agent is not None:
            with connect_as_agent(args.agent) as client:
                data = client.call("policy.get")
        else:
            with looking_as_person("policy show") as client:
                data = client.call("policy.get")

        def human() -> None:
            print(f"capture {'PAUSED' if data['paused'] else 'on'}")
            mine = data.get("for_this_agent")
            kinds = mine["kinds"] if mine else data["kinds"]
            print("kinds:   " + ", ".join(f"{k} {v}" for k, v in kinds.items()))
            scopes = mine["scopes"] if mine else data["scopes"]
            print("scopes:  " + ", ".join(f"{k} {v}" for k, v in scopes.items()))
            print(f"extracted by a model: {mine['extracted'] if mine else data['extracted']}")
            if not mine:
                print(f"kinds not listed: {data['other_kinds']}")
                for name, rule in data["agents"].items():
                    parts = [
                        f"{part} " + ", ".join(f"{k} {v}" for k, v in rule[part].items())
                        for part in ("kinds", "scopes")
                        if rule.get(part)
                    ]
                    if rule.get("extracted"):
                        parts.append(f"extracted by a model {rule['extracted']}")
                    # names and the warning come from the policy file, which anyone may edit
                    print(visible(f"agent {name}: " + "; ".join(parts)))
                print(f"file: {visible(data['file'])}")
                if data.get("file_warning"):
                    print(f"warning: {visible(data['file_warning'])}")

        emit(args, data, human)
        return 0
    from core.policy import Mode, PolicyInvalid, all_auto, with_mode  # see core.terminal's _LATER

    value: Any = args.value
    if args.setting == "paused":
        if value not in ("true", "false"):
            raise InvalidInput("paused takes true or false")
        value = value == "true"
    elif value not in [m.value for m in Mode]:  # checked before the confirmation
        raise InvalidInput(
            f"{args.setting} takes one of {', '.join(m.value for m in Mode)}, not {value!r}"
        )
    kinds = _known_kinds()
    try:  # the setting, checked before the confirmation against a policy of the known kinds
        with_mode(all_auto(kinds), args.setting, value, kinds)
    except PolicyInvalid as e:
        raise InvalidInput(str(e), data={"field": args.setting}) from e
    with connect_as_person(
        f"Set {args.setting} to {args.value} in your capture policy?",
        f"set {args.setting} {args.value}",
    ) as client:
        data = client.call("policy.set", {"setting": args.setting, "value": value})
    emit(args, data, lambda: print(f"{args.setting} is now {args.value}"))
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "policy": cmd_policy,
}
