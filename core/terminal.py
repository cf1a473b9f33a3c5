"""Talking to a person at a terminal: output (human or `--json`), the typed confirmation that
people's commands ask for, and connecting to Cairn as an agent or as a person."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from core.client import Client
from core.errors import (
    AlreadyRunning,
    CairnError,
    ConnectionClosed,
    Forbidden,
    InvalidInput,
    NoAnswer,
    NotFound,
    NotRunning,
)
from core.paths import Paths
from core.runtime import probe, socket_path
from core.validation import normalize_breaks
from core.wording import UNTRUSTED, cut, visible

# _LATER: the scanner and the governance rules are imported where a command uses them: with the
# engine they pull in, imported for every `cairn` command they made each take about a second to
# start (until 2026-12-02). tests/test_boundaries.py keeps a served command's imports light.

if TYPE_CHECKING:
    from core.app import Cairn


def emit(args: argparse.Namespace, data: Any, human: Callable[[], None]) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        human()


def at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def speaks_for_a_person(args: argparse.Namespace) -> bool:
    """`cairn add`, `forget` and `get` (and `search --all-workspaces`) typed at a terminal, with
    no agent named, are a person's."""
    return args.agent is None and not os.environ.get("CAIRN_AGENT") and at_terminal()


def recalled(args: argparse.Namespace, data: dict[str, Any], human: Callable[[], None]) -> None:
    """Print a read's answer that holds stored memory text: `human`, or with --json the answer
    with `"untrusted": true` beside its own fields (always: a program may pass it on to a model).
    """
    emit(args, {**data, "untrusted": True}, human)


def label_untrusted(args: argparse.Namespace) -> None:
    """The MCP tools' label for recalled text, printed above it where the output may reach a
    model: the command runs as an agent (`--agent`, $CAIRN_AGENT) or not at a terminal. A
    person at a terminal reading their own memories is not shown it: it is meant for a model,
    and it would crowd every read the person makes."""
    if not speaks_for_a_person(args):
        print(UNTRUSTED)


# What a command that binds the folder it runs in says when that folder was deleted (until
# 2026-11-30 every command ended in a traceback there); `cairn mcp` says the same of its own.
FOLDER_GONE = "the folder this command runs in no longer exists; cd to an existing folder"


def working_folder(*, needed: bool = True, instead: str = "") -> str | None:
    """The folder the command runs in: a project memory's workspace. None when it was deleted
    and the command does not need it (it binds none then).

    Raises:
        NotFound: the folder was deleted and the command needs it (`FOLDER_GONE`, then
            `instead`: another way to give one).
    """
    try:
        return os.getcwd()
    except FileNotFoundError:
        if needed:
            raise NotFound(FOLDER_GONE + instead, data={"field": "workspace"}) from None
        return None


def connect(
    args: argparse.Namespace, *, as_person: bool = False, stores_here: bool = False
) -> Client:
    """A connection for a memory command. An agent's is bound to `--workspace` or the folder
    it runs in (its horizon, where its project memories land). A person sees every workspace,
    so a person's binds none - binding a folder registers it as a workspace, and a person's
    `get` or `health` from any folder added one to `workspace list` until 2026-12-01 - unless
    `stores_here`: a person's `add`, whose project memory lands there."""
    if as_person and not stores_here:
        return Client.connect(role="human", workspace=None, session=args.session)
    workspace = args.workspace
    if workspace is None:
        workspace = working_folder(instead=" (or give --workspace)")
    if as_person:
        return Client.connect(role="human", workspace=workspace, session=args.session)
    return Client.connect(agent=args.agent, workspace=workspace, session=args.session)


def connect_as_agent(agent: str | None) -> Client:
    """An agent's connection for a subcommand's own `--agent NAME` (None: $CAIRN_AGENT or cli),
    bound to no workspace: what these commands read or propose (identity, policy) does not
    depend on one, and binding the folder would register it."""
    return Client.connect(agent=agent, workspace=None)


def for_a_person(what: str | None = None) -> None:
    """People's commands run only from an interactive terminal: an agent with a shell has none."""
    if not at_terminal():
        command = f"`cairn {what}`" if what else "this command"
        raise Forbidden(
            f"{command} is for a person: run it yourself in an interactive terminal "
            "(standard input and output must be a terminal)"
        )


def confirm(prompt: str, expected: str) -> None:
    """The typed confirmation people's commands ask for; no flag skips it."""
    try:
        answer = input(f"{prompt}\nType {expected!r} to confirm: ").strip()
    except EOFError:  # standard input ended (piped, or Ctrl-D) before an answer
        answer = ""
    if answer != expected:
        raise NotConfirmed("not confirmed; nothing was changed")


# What a command run without a terminal is told when Cairn stops while the tray asks about it
# (the tray says the same when its question is cut short by the stop).
STOPPED_BEFORE_ANSWER = "Cairn stopped before the person answered; nothing was done"

# How long a command run without a terminal waits for the person to answer the tray's question
# (the tray gives up after desktop.person_check.ANSWER_WITHIN_S).
_TRAY_ANSWER_WAIT_S = 90.0

EXIT_OK = 0
EXIT_FAILED = 1  # a confirmation not given, or some lines of a bulk add or an import failed
EXIT_USAGE = 2
EXIT_REFUSED = 77  # a write Cairn refused (policy off, capture paused, a secret): nothing stored


def connect_as_person(
    prompt: str, expected: str, *, autostart: bool = True, bind_cwd: bool = False
) -> Client:
    """A person's connection: from an interactive terminal after a typed confirmation, or,
    without a terminal, confirmed by the person in the running tray (`asked_in_the_tray`).
    It binds no workspace - binding the directory it runs in registers it as one - unless
    `bind_cwd` (a decision that lands a memory there); a deleted directory binds none."""
    workspace = working_folder(needed=False) if bind_cwd else None
    if not at_terminal():
        return asked_in_the_tray(workspace)
    confirm(prompt, expected)
    return Client.connect(role="human", workspace=workspace, autostart=autostart)


def looking_as_person(what: str) -> Client:
    """A person's connection for a command that only looks: an interactive terminal (no typed
    confirmation), or the tray's confirmation without one. It binds no workspace: a person
    sees them all, and binding the directory it runs in would register it as one."""
    if not at_terminal():
        return asked_in_the_tray(None, what)
    return Client.connect(role="human", workspace=None)


def asked_in_the_tray(workspace: str | None, what: str | None = None) -> Client:
    """Without a terminal, only a running Cairn can let a person's command through: the tray
    shows the person which program asks and waits for their answer; the headless daemon, with
    nobody to ask, refuses. Nothing is started for this, and with nothing running the command
    is refused here."""
    try:
        return Client.connect(
            role="human", workspace=workspace, autostart=False, timeout=_TRAY_ANSWER_WAIT_S
        )
    except ConnectionClosed as e:
        # Cairn was there to ask, and stopped first (until 2026-11-30 this read as "run it
        # yourself in an interactive terminal", as if nothing had run).
        raise NotRunning(STOPPED_BEFORE_ANSWER) from e
    except NoAnswer:
        raise  # it says what was waited for and how long
    except NotRunning:
        for_a_person(what)  # says why: run it yourself in a terminal
        raise


def served_or_here(
    paths: Paths,
    method: str,
    params: dict[str, Any],
    here: Callable[[Cairn], dict[str, Any]],
    *,
    timeout: float = 30.0,
    if_no_store: str | None = None,
) -> dict[str, Any]:
    """A person's request: the running Cairn holds the store, so ask it; when none runs, open
    the store here and call the same service (`here`). The connection binds no workspace: the
    folder the command runs in is none of its business (a request about a folder names it).

    Raises:
        NotFound: `if_no_store` is given (the reason for the person), no Cairn runs and there
            is no store yet - a command that must change nothing does not create one.
    """

    def ask() -> dict[str, Any]:
        with Client.connect(
            paths, role="human", workspace=None, autostart=False, timeout=timeout
        ) as client:
            try:
                return client.call(method, params)
            except KeyboardInterrupt:
                # Only this command stops: the running Cairn carries the request to its end
                # (an import lands whole or not at all), so say so rather than imply a cancel.
                print(
                    f"cairn: interrupted; the running Cairn still finishes {method} - "
                    "`cairn status` (or the tray) shows the result",
                    file=sys.stderr,
                )
                raise

    if probe(socket_path(paths)):
        return ask()
    if if_no_store is not None:
        refuse_without_store(paths, if_no_store)
    from core.app import Cairn

    try:
        cairn = Cairn.open(paths)
    except AlreadyRunning:
        if not probe(socket_path(paths)):
            raise
        return ask()  # it started between the probe and the open: it holds the store
    try:
        return here(cairn)
    finally:
        cairn.close()


# Where Cairn looks, for a command that found no store there (a mistyped CAIRN_HOME).
WHERE_CAIRN_LOOKS = "`cairn paths` shows where Cairn looks ($CAIRN_HOME moves it)"


def refuse_without_store(paths: Paths, why: str) -> None:
    """A command that reads the store, run while no Cairn runs, does not create one: opening
    the store here would make an empty store (its folders, its policy file) and work on that.

    Raises:
        NotFound: there is no store at `paths.database`; `why` says what that means for the
            command (`nothing to export`), naming the path.
    """
    if not paths.database.exists():
        raise NotFound(
            f"there is no store at {paths.database} yet; {why}",
            data={"database": str(paths.database)},
        )


class NotConfirmed(CairnError):
    pass


def when(ms: int | None) -> str:
    """A stored time (ms since the epoch) as local date and time; '-' for never."""
    if ms is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ms / 1000))


def _code_point(ch: str) -> str:
    """A character as its code point, as Python writes it (`\\u00ad`, `\\U000e0041`)."""
    cp = ord(ch)
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def visible_flagged(text: str, rules: Collection[str]) -> str:
    """`visible(text)`, and each hidden character the scanner flags under one of `rules` (a
    proposal's hygiene flags) as a marker too: a soft hyphen, a joiner or a variation selector
    prints raw where it is in use, so next to 'why: scanner:hygiene:invisible-char' the person
    saw nothing wrong (until 2026-11-30). A hidden-character finding covers hidden characters
    only, so every character of its span is shown as a marker."""
    if not rules:  # nearly every line printed: no scan of it
        return visible(text)
    from core.scanner import Family, scan  # see _LATER

    spans = [(f.start, f.end) for f in scan(text) if f.family is Family.HYGIENE and f.rule in rules]
    out: list[str] = []
    pos = 0
    for start, end in spans:
        at = max(start, pos)
        out += [visible(text[pos:at]), "".join(map(_code_point, text[at:end]))]
        pos = max(pos, end)
    out.append(visible(text[pos:]))
    return "".join(out)


def hygiene_rules(flags: list[dict[str, Any]] | None) -> frozenset[str]:
    """The hidden-character rules among a proposal's scanner flags."""
    from core.scanner import Family  # see _LATER

    return frozenset(f["rule"] for f in flags or () if f.get("family") == Family.HYGIENE.value)


def short(text: str, width: int = 100, flagged: Collection[str] = ()) -> str:
    """`text` on one line (whitespace runs as one space), cut to `width`, controls visible (and
    the hidden characters flagged under `flagged` rules, `visible_flagged`)."""
    flat = visible_flagged(" ".join(text.split()), flagged)
    return cut(flat, width)


def memory_line(m: dict[str, Any]) -> str:
    marks = "".join(
        mark
        for flag, mark in (
            (m.get("pinned"), " [pinned]"),
            (m.get("status") == "archived" or m.get("archived"), " [archived]"),
            (m.get("status") == "superseded", " [superseded]"),
            (m.get("status") == "forgotten", " [forgotten: its words are erased]"),
            (m.get("expired"), " [expired]"),
            (m.get("disputed"), " [disputed]"),
        )
        if flag
    )
    return (
        f"{m['id']}@{m['revision']}  {m['scope']}/{m['kind']}  {m.get('author_tier', '')}{marks}\n"
        f"    {short(m['content'])}"
    )


UTF8_BOM = b"\xef\xbb\xbf"


def read_stdin() -> str:
    """Standard input's text, without a leading byte order mark: Windows Notepad starts a file
    with one, and it is no text of a memory (settings.toml, policy.toml and `identity --file`
    skip it too; until 2026-11-30 `cairn add - < notes.txt` stored it)."""
    return sys.stdin.read().removeprefix("\ufeff")


def open_input(name: str) -> BinaryIO:
    """A file named on the command line, for reading bytes.

    Raises:
        NotFound: there is no such file.
        InvalidInput: it is a folder, or it cannot be read.
    """
    path = Path(name)
    if path.is_dir():
        raise InvalidInput(f"{name} is a folder; give a file")
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise NotFound(f"there is no file at {name}") from None
    except OSError as e:
        raise InvalidInput(f"{name} cannot be read: {e.strerror or e}") from None


def print_or_drop(line: str) -> None:
    """Print a result line; once nothing reads standard output (`| head -1`), keep going
    without it - the writes are the point, the report is not."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def exit_status(error: CairnError) -> int:
    """The exit status for a refusal: a secret is refused with 77 wherever it is found - a
    write's text, an edit, a reason - as for a refused write (docs/cli.md's table), though
    Cairn answers one in an edit or a reason with `invalid_params`."""
    if (error.data or {}).get("reason_code") == "secret":
        return EXIT_REFUSED
    return error.code.exit_status


def write_status(result: dict[str, Any]) -> int:
    """The exit status for a write (or a proposal): 0 when stored or waiting for review, the
    refusal's own status (77: not permitted) when Cairn refused it."""
    return EXIT_REFUSED if result.get("status") == "refused" else 0


def describe_write(result: dict[str, Any]) -> str:
    """A write's (or a proposal's) answer as one line: `stored m_...@1`, `pending review (s_...):
    why`, `refused (code): why`."""
    status = result["status"]
    if status == "stored":
        extra = ""
        if result.get("duplicate"):
            archived = ", archived" if result.get("archived") else ""
            extra = f" (already stored{archived}: nothing new)"
        elif result.get("archived"):
            # An agent's dedupe-key write into what a person archived: the revision is kept and
            # the memory stays archived (until 2026-11-30 this said a plain "stored m_...@3").
            extra = " (archived: kept, not current; only a person can restore it)"
        if result.get("similar"):
            extra += f" (closely resembles {', '.join(result['similar'])})"
        return f"stored {result['id']}@{result['revision']}{extra}"
    if status == "pending":
        why = str(result.get("reason") or "a person will decide").split(": ", 1)[-1]
        return f"pending review ({result['suggestion_id']}): {why}"
    return f"refused ({result.get('reason_code')}): {result.get('reason')}"


def refuse_a_secret(option: str, texts: list[str], *, plural: bool = False) -> None:
    """A secret in an option's text, refused before the confirmation as the running Cairn would
    refuse it after (`reason_code: secret`: the exit status of a refused secret)."""
    from core.governance import secret_sentence  # see _LATER
    from core.scanner import secret_rule

    rule = next((r for t in texts if (r := secret_rule(t)) is not None), None)
    if rule is not None:
        raise InvalidInput(
            secret_sentence(option, rule, plural=plural),
            data={"field": option, "rule": rule, "reason_code": "secret"},
        )


def refuse_a_reason(reason: str, check: Callable[[str, str], None] | None = None) -> None:
    """`--reason` refused before the confirmation as the running Cairn would refuse it after:
    `check` (its rule for this reason: a note's by default) on the text as the socket reads it -
    its line breaks as line feeds (`requests.text`, `normalize_breaks`; until 2026-11-30 the CLI
    checked the raw text: a CRLF reason the running Cairn takes was refused for its carriage
    return, and its length counted them) - then a secret in it."""
    if check is None:
        from core.governance import check_note  # see _LATER

        check = check_note
    check("--reason", normalize_breaks(reason))
    refuse_a_secret("--reason", [reason])
