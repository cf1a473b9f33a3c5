"""`cairn identity`: read the identity documents, and - for a person at a terminal - their
history, a new version, or a revert (shown as a diff first, applied after the typed word).

`identity show` works for an agent too (`--agent NAME`, what that agent reads, with flagged
spans blocked); `identity propose` is how an agent asks for a change, which waits for review.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from core.errors import CairnError, InvalidInput
from core.paths import resolve_paths
from core.settings import load_settings
from core.terminal import (
    connect_as_agent,
    connect_as_person,
    describe_write,
    emit,
    looking_as_person,
    open_input,
    read_stdin,
    refuse_a_reason,
    refuse_a_secret,
    when,
    write_status,
)
from core.validation import normalize_breaks
from core.wording import visible

_DOC = "soul (yours, or the shared default), soul:default, soul:NAME or user"


def add_parsers(sub: Any) -> None:
    identity = sub.add_parser("identity", help="the identity documents: soul and user profile")
    actions = identity.add_subparsers(dest="identity_command", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="a document as it stands (soul, user, soul:NAME)")
    show.add_argument("doc", nargs="?", default="soul", help=_DOC)
    show.add_argument("--agent", help="read it as this agent would (flagged text blocked)")
    listing = actions.add_parser("list", help="every document and its current version")
    history = actions.add_parser("history", help="every version of one document")
    history.add_argument("doc", help=_DOC)
    edit = actions.add_parser("edit", help="write a new version (you type to confirm)")
    edit.add_argument("doc", help=_DOC)
    edit.add_argument(
        "--file",
        help="the new text (default: standard input, ended by EOF; piped in, the command has no "
        "terminal, so only the running tray can ask you to confirm - at a terminal, use --file)",
    )
    edit.add_argument(
        "--if-version",
        type=int,
        metavar="N",
        help="the version your text was written from (default: the current one, read before "
        "you confirm); a document changed since is a conflict, never overwritten",
    )
    edit.add_argument("--reason", help="why (kept with the version)")
    revert = actions.add_parser(
        "revert", help="go back to an older version: shows the diff, then you type to confirm"
    )
    revert.add_argument("doc", help=_DOC)
    revert.add_argument("version", type=int, help="the version whose text comes back")
    propose = actions.add_parser("propose", help="as an agent, propose a new version")
    propose.add_argument("doc", help=_DOC)
    propose.add_argument("--agent", help="agent name (default: $CAIRN_AGENT or cli)")
    propose.add_argument("--file", help="the proposed text (default: standard input)")
    propose.add_argument("--reason", help="why")
    for p in (show, listing, history, edit, revert, propose):
        p.add_argument("--json", action="store_true", help="print JSON")


def author(version: dict[str, Any]) -> str:
    """Who wrote a version: `the person`, `agent code-helper`, `Cairn` (a name stored before
    2026-11-30 may hold a control character: shown visibly)."""
    kind, name = version["author_kind"], version["author"]
    if kind == "human":
        return "the person"
    if kind == "system":
        return "Cairn"
    return visible(f"{kind} {name}")


def _read(file: str | None) -> str:
    if file:
        with open_input(file) as source:
            raw = source.read()
        try:
            # a byte order mark (Notepad) is not text of the document: it reached agents
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InvalidInput(f"{file} is not UTF-8 text (byte {e.start})") from None
    if sys.stdin.isatty():
        raise InvalidInput(
            "give the text with --file (at a terminal, standard input is where you confirm; "
            "text piped in is confirmed in the running tray)"
        )
    return read_stdin()


def cmd_identity(args: argparse.Namespace) -> int:
    action = args.identity_command
    if action == "show":
        if args.agent is not None:
            with connect_as_agent(args.agent) as client:
                doc = client.call("identity.get", {"doc": args.doc})
        else:
            with looking_as_person("identity show") as client:
                doc = client.call("identity.get", {"doc": args.doc})

        def shown() -> None:
            print(
                f"{visible(doc['doc'])} v{doc['version']} - {author(doc)}, "
                f"{when(doc['created_at'])}"
            )
            print(visible(doc["content"]), end="" if doc["content"].endswith("\n") else "\n")

        emit(args, doc, shown)
        return 0
    if action == "propose":
        with connect_as_agent(args.agent) as client:
            result = client.call(
                "identity.propose",
                {"doc": args.doc, "content": _read(args.file), "reason": args.reason},
            )

        def said() -> None:
            if result["status"] == "pending":
                print(f"pending review ({result['suggestion_id']})")
            else:
                print(visible(describe_write(result)))

        emit(args, result, said)
        return write_status(result)
    if action in ("list", "history"):
        with looking_as_person(f"identity {action}") as client:
            if action == "list":
                data: Any = client.call("identity.list")["documents"]
            else:
                data = client.call("identity.history", {"doc": args.doc})["versions"]

        def lines() -> None:
            for v in data:
                reason = f" - {visible(v['reason'])}" if v.get("reason") else ""
                print(
                    f"{visible(v['doc'])} v{v['version']}  {when(v['created_at'])}  "
                    f"{author(v)}{reason}"
                )

        emit(args, data, lines)
        return 0
    if action == "edit":
        content = _check_edit(_read(args.file), args.reason)
        base = args.if_version
        if base is None:
            # The version being replaced is read before the confirmation: one adopted while the
            # person decides is then a conflict, not silently written over.
            with looking_as_person("identity edit") as client:
                base = int(client.call("identity.get", {"doc": args.doc})["version"])
        with connect_as_person(
            f"Write a new version of {args.doc} over version {base} "
            f"({len(content.encode())} bytes)?",
            f"edit {args.doc}",
        ) as client:
            new = client.call(
                "identity.edit",
                {"doc": args.doc, "content": content, "if_version": base, "reason": args.reason},
            )

        def said() -> None:
            if new["version"] == base:
                print(
                    f"{new['doc']} is unchanged at version {new['version']}: the text is the same"
                )
            else:
                print(f"{new['doc']} is now at version {new['version']}")

        emit(args, new, said)
        return 0
    return _revert(args)


def _check_edit(content: str, reason: str | None) -> str:
    """What the running Cairn would refuse in an edit, refused before the person is asked to
    confirm it (until 2026-11-30 after they typed `edit DOC`), by the service's own rules: the
    text's size (`identity.max_bytes` from the settings; when they cannot be read the running
    Cairn judges) and control characters, a secret in it, and the reason's length and secret -
    each judged as it is stored, its line breaks as line feeds.

    Returns:
        The text as it is stored, whose size the confirmation gives (until 2026-11-30 it gave
        the file's, CRLF line ends counted twice).

    Raises:
        InvalidInput, TooLarge: naming what is wrong (a secret with `reason_code: secret`).
    """
    try:
        max_bytes = load_settings(resolve_paths().settings_file).integer("identity.max_bytes")
    except CairnError:
        max_bytes = None
    # check_document returns the text as the service stores it (line breaks as line feeds)
    if max_bytes is not None:
        from core.identity import check_document  # see core.terminal's _LATER

        content = check_document(content, max_bytes)
    else:
        content = normalize_breaks(content)
    refuse_a_secret("the content", [content])
    if reason:
        refuse_a_reason(reason)
    return content


def _revert(args: argparse.Namespace) -> int:
    with looking_as_person("identity revert") as client:
        preview = client.call("identity.revert_preview", {"doc": args.doc, "version": args.version})
    if not args.json:
        print(visible(preview["diff"]) or "(no difference in text)")
    with connect_as_person(
        f"Revert {preview['doc']} from version {preview['current_version']} to the text of "
        f"version {preview['target_version']} (a new version; history is kept)?",
        f"revert {preview['doc']}",
    ) as client:
        new = client.call("identity.revert_apply", {"token": preview["token"]})
    emit(
        args,
        {"preview": preview, "version": new},
        lambda: print(
            f"{new['doc']} is now at version {new['version']} ({visible(new['reason'])})"
        ),
    )
    return 0


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"identity": cmd_identity}
