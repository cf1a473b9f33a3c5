"""The documentation describes what exists: every setting is documented, the tier table in
docs/data-model.md is the one the code uses."""

from __future__ import annotations

import argparse
import re

from core.cli import build_parser
from core.settings import KNOBS, documented_names, render_reference
from core.tiers import render_table
from tests.conftest import ROOT


def test_every_setting_is_documented() -> None:
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    missing = {k.name for k in KNOBS} - documented_names(text)
    assert not missing, f"settings missing from docs/settings.md: {sorted(missing)}"
    assert render_reference() in text, "run scripts/render_settings_docs.py"


def test_tier_table_in_docs_matches_the_code() -> None:
    text = (ROOT / "docs" / "data-model.md").read_text(encoding="utf-8")
    assert render_table() in text, "docs/data-model.md must contain the table from core.tiers"


# What the code writes as a revision's `action`, and as an audit event's (= a change's) action.
REVISION_ACTIONS = (
    "write",
    "update",
    "upsert",
    "pin",
    "unpin",
    "archive",
    "unarchive",
    "supersede",
    "unsupersede",
    "rebind",
    "expire",
    "forget",
)
MEMORY_CHANGES = (*REVISION_ACTIONS, "purge", "feedback", "contradict", "resolve", "import")
PEOPLE_CHANGES = (
    "propose",
    "reobserve",
    "reject",
    "adopt",
    "review_evicted",
    "policy_changed",
    "scan_allow",
    "scan_unallow",
    "read_raw",
    "identity_version",
    "workspace_moved",
    "workspace_merged",
    "agent_add",
    "agent_active",
    "agent_paused",
    "agent_revoked",
    "audit_rotated",
)
_WRITTEN = (
    r'audit\.record(?:_many)?\(\s*\w+,\s*[\w.()]+,\s*"([a-z_]+)"',
    r'save_revision_in\(\s*\w+,\s*\w+,\s*\w+,\s*"([a-z_]+)"',
    r'set_state_in\(\s*\w+,\s*[\w.]+,\s*[\w.]+,\s*"([a-z_]+)"',
    r'(?:insert_revision|revision_values)\([^)]*\baction="([a-z_]+)"',
    r'_set_state\(\s*\w+,\s*\w+,\s*"([a-z_]+)" if \w+ else "([a-z_]+)"',
    r'\baction = "([a-z_]+)"(?: if \w+ else "([a-z_]+)")?',
)


def _between(name: str, start: str, end: str) -> str:
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    begin = text.index(start)
    return text[begin : text.index(end, begin)]


def test_the_lists_of_actions_in_the_docs_are_complete() -> None:
    """Every revision action and every change action the code writes is named where the docs
    list them (they left out `rebind`, `expire`, `workspace_merged`, ...)."""
    found: set[str] = set()
    for path in (ROOT / "core").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        for pattern in _WRITTEN:
            for match in re.finditer(pattern, source):
                found.update(g for g in match.groups() if g)
    statuses = {"active", "paused", "revoked"}  # f"agent_{status.value}"
    found |= {f"agent_{s}" for s in statuses}
    known = set(MEMORY_CHANGES) | set(PEOPLE_CHANGES)
    assert {"rebind", "expire", "workspace_merged", "import"} <= found
    assert found <= known, f"actions the code writes that no list here has: {found - known}"
    lists = {
        "data-model.md": (
            _between("data-model.md", "## Revisions are immutable", "The one deliberate"),
            REVISION_ACTIONS,
        ),
        "backup-and-export.md": (
            _between("backup-and-export.md", "A revision has `revision`", "A relation has"),
            tuple(a for a in REVISION_ACTIONS if a != "forget"),
        ),
        "protocol.md": (
            _between("protocol.md", "## The `changes` notification", "## Errors"),
            (*MEMORY_CHANGES, *PEOPLE_CHANGES),
        ),
    }
    for name, (text, actions) in lists.items():
        missing = [a for a in actions if f"`{a}`" not in text]
        assert not missing, f"docs/{name} does not list {missing}"


def _commands(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, list[str]]]:
    """Every command under `parser` (its words after `cairn`) with its long flags."""
    found = [(path, [o for a in parser._actions for o in a.option_strings if o.startswith("--")])]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, f"{path} {name}".strip())
    return found


def test_every_command_and_flag_is_in_the_cli_reference() -> None:
    """docs/cli.md names every `cairn` command, subcommand and flag the parser has (many were
    documented nowhere: `review show`, `add --dedupe-key`, `list --cursor`, ...)."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for path, flags in _commands(build_parser(), ""):
        if path and f"cairn {path}" not in text:
            missing.append(f"cairn {path}")
        missing += [
            f"cairn {path} {flag}"
            for flag in flags
            if not re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text)
        ]
    assert not missing, f"docs/cli.md does not mention {missing}"


def test_every_command_says_what_it_does_and_every_argument_what_it_takes() -> None:
    """`cairn review adopt --help` had no line saying what it does, and `list --status`,
    `forget --reason` and a dozen more no word on what they take."""
    silent: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if not sub.description:
                        silent.append(f"cairn {path} {name}".replace("  ", " "))
                    walk(sub, f"{path} {name}".strip())
            elif action.help is None:
                silent.append(f"cairn {path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "")
    assert not silent, silent


def test_every_environment_variable_is_in_the_cli_reference() -> None:
    """Every `CAIRN_*` variable the program or its scripts read is in docs/cli.md's table."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text[text.index("## Environment variables") : text.index("## Common flags")]
    read: set[str] = set()
    for folder in ("core", "desktop", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and path.suffix in ("", ".py", ".sh"):
                read |= set(re.findall(r"\bCAIRN_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    assert {"CAIRN_HOME", "CAIRN_AGENT", "CAIRN_NO_AUTOSTART", "CAIRN_PYTHON"} <= read
    missing = sorted(v for v in read if f"`{v}`" not in table)
    assert not missing, f"docs/cli.md's environment table does not list {missing}"
