"""The documentation describes what exists: every setting is documented, the tier table in
docs/data-model.md is the one the code uses."""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shlex

from core.cli import build_parser
from core.errors import ErrorCode
from core.knobs import KNOBS, documented_names, render_reference
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


def _pages() -> dict[str, str]:
    """README.md and every page of docs/, by name."""
    pages = {"README.md": (ROOT / "README.md").read_text(encoding="utf-8")}
    for path in sorted((ROOT / "docs").glob("*.md")):
        pages[f"docs/{path.name}"] = path.read_text(encoding="utf-8")
    return pages


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _parses(argv: list[str]) -> str | None:
    """None when the parser takes `argv`, else argparse's last line of complaint."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser().parse_args(argv)
    except SystemExit as exit_:
        if exit_.code:
            return (err.getvalue().strip().splitlines() or [str(exit_.code)])[-1]
    return None


# `$ cairn ...` (or `./scripts/run ...`) at the start of a shown line, after any VAR=value.
_SHOWN_RUN = re.compile(r"^\s*\$ (?:[A-Z_]+=\S* )*(?:cairn|\./scripts/run)(?: (.*))?$")


def _shown_runs(text: str) -> list[tuple[int, str, list[str]]]:
    """Each command line a page shows run, with its line number and the output under it."""
    lines = text.splitlines()
    runs = []
    for i, line in enumerate(lines):
        match = _SHOWN_RUN.match(line)
        if match is None:
            continue
        output = []
        for after in lines[i + 1 :]:
            if after.lstrip().startswith(("$ ", "```")):
                break
            output.append(after)
        runs.append((i + 1, match.group(1) or "", output))
    return runs


def test_every_command_a_page_shows_run_is_one_the_parser_takes() -> None:
    """A page that shows `$ cairn X --flag` shows a command that exists: each shown run parses
    with today's parser, unless its output is the usage error it was shown for. (A renamed
    flag or a removed subcommand otherwise lives on in a pasted run.)"""
    wrong = []
    for name, text in _pages().items():
        for number, shown, output in _shown_runs(text):
            # What goes to the shell, not to cairn: a comment, a pipe, a redirection, `&& ...`.
            command = re.split(r"\s+#|\s(?:\||&&|;|<|>|2>)\s", shown)[0]
            reason = _parses(shlex.split(command))
            if reason is not None and not any("error:" in line for line in output):
                wrong.append(f"{name}:{number}: cairn {command}: {reason}")
    assert not wrong, "\n".join(wrong)


def test_every_command_a_page_names_exists() -> None:
    """A page naming `cairn WORD SUBWORD --flag` in running text names a command, subcommand
    and flags the parser has (placeholders in capitals and `...` aside)."""
    top = _subcommands(build_parser())
    wrong = []
    for name, text in _pages().items():
        for match in re.finditer(r"`(?:[A-Z_]+=\S+ )*cairn ([a-z][^`]*)`", text):
            words = match.group(1).split()
            where = f"{name}:{_line_of(text, match.start())}: `cairn {match.group(1)}`"
            alternatives = words[0].split("|")
            wrong += [f"{where}: no command {w!r}" for w in alternatives if w not in top]
            if len(alternatives) > 1 or words[0] not in top:
                continue
            parser = top[words[0]]
            subs = _subcommands(parser)
            if subs and len(words) > 1 and re.fullmatch(r"[a-z]+(\|[a-z]+)*", words[1]):
                wrong += [
                    f"{where}: no subcommand {w!r}" for w in words[1].split("|") if w not in subs
                ]
                parser = subs.get(words[1], parser)
            flags = {o for a in parser._actions for o in a.option_strings}
            wrong += [
                f"{where}: no flag {flag}"
                for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", match.group(1))
                if flag not in flags and f"{name}:{flag}" not in _FLAGS_SHOWN_REFUSED
            ]
    assert not wrong, "\n".join(wrong)


# Flags a page names to say they are refused.
_FLAGS_SHOWN_REFUSED = {"docs/cli.md:--json"}  # `cairn serve --json` is refused, exit 2

# Dotted names in backquotes that look like a setting (`review.max_items`) and are something
# else: health fields, an archive's field, functions.
_NOT_SETTINGS = {
    "review.pending",
    "review.evicted",
    "review.oldest_age_s",
    "review.ranking",
    "audit.other_history",
    "identity.check_document",
}


def test_every_setting_a_page_names_exists() -> None:
    """Every `section.name` a page names, of a section settings.toml has, is a setting
    (core/knobs.py), a protocol method or a file; and every key a ```toml block sets under
    such a section is a setting - a renamed or removed setting otherwise lives on in the docs."""
    settings = {k.name for k in KNOBS}
    sections = {n.split(".")[0] for n in settings}
    methods = set(re.findall(r'"([a-z_]+\.[a-z_]+)"', (ROOT / "core" / "protocol.py").read_text()))
    files = ("md", "py", "png", "jsonl", "toml", "db", "txt", "json")
    wrong = []
    for name, text in _pages().items():
        for match in re.finditer(r"`([a-z_]+)\.([a-z_]+)(?=[` =])", text):
            dotted = f"{match.group(1)}.{match.group(2)}"
            if match.group(1) not in sections or match.group(2) in files:
                continue
            if dotted not in settings | methods | _NOT_SETTINGS:
                wrong.append(f"{name}:{_line_of(text, match.start())}: {dotted}")
        for block in re.finditer(r"```toml\n(.*?)```", text, re.S):
            section = None
            for offset, line in enumerate(block.group(1).splitlines()):
                if header := re.match(r"\s*\[([a-z_.]+)\]", line):
                    section = header.group(1)
                elif (key := re.match(r"\s*([a-z_]+)\s*=", line)) and section in sections:
                    dotted = f"{section}.{key.group(1)}"
                    if dotted not in settings:
                        number = _line_of(text, block.start()) + 1 + offset
                        wrong.append(f"{name}:{number}: {dotted}")
    assert not wrong, "settings named in the docs that core/knobs.py lacks:\n" + "\n".join(wrong)


def test_the_error_table_in_the_protocol_page_is_the_code_s() -> None:
    """docs/protocol.md's error table has a row for each error code with its JSON-RPC number
    and exit status as core/errors.py has them, and no row for a code that is not there."""
    text = _between("protocol.md", "| code | name | CLI exit | meaning |", "\n\n")
    rows = {
        m.group(2): (int(m.group(1)), int(m.group(3)))
        for m in re.finditer(r"^\| (-\d+) \| `([a-z_]+)` \| (\d+) \|", text, re.M)
    }
    code = {c.label: (c.rpc_code, c.exit_status) for c in ErrorCode}
    assert rows == code, {
        "in the code, not as in the table": {k: v for k, v in code.items() if rows.get(k) != v},
        "in the table, not in the code": sorted(rows.keys() - code.keys()),
    }
