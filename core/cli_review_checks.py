"""What `cairn review adopt` and `review reject` refuse before the person is asked to confirm:
the `--set` edits and their limits, options that clash, and - at a terminal - options a waiting
proposal does not take."""

from __future__ import annotations

import argparse
from typing import Any

from core.errors import CairnError, ErrorCode, InvalidInput
from core.model import Scope
from core.paths import resolve_paths
from core.settings import load_settings
from core.terminal import at_terminal, looking_as_person, refuse_a_reason, refuse_a_secret
from core.validation import (
    Limits,
    check_content,
    check_keywords,
    check_summary,
    check_tags,
)

EDIT_FIELDS = ("content", "summary", "kind", "scope", "importance", "keywords")


def _edits(pairs: list[str], kinds: tuple[str, ...]) -> dict[str, Any]:
    """`--set FIELD=VALUE` pairs as edits; `kinds`: those Cairn takes (none: not checked here)."""
    edits: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in (*EDIT_FIELDS, "tags"):
            raise InvalidInput(
                f"--set takes FIELD=VALUE with FIELD one of {', '.join(EDIT_FIELDS)}, tags"
            )
        if name == "importance":
            if value.strip() not in ("1", "2", "3", "4", "5"):
                raise InvalidInput(f"--set importance takes a number from 1 to 5, not {value!r}")
            edits[name] = int(value)
        elif name == "tags":
            edits[name] = [t.strip() for t in value.split(",") if t.strip()]
        elif name == "scope" and value not in [s.value for s in Scope]:
            raise InvalidInput(
                f"--set scope takes one of {', '.join(s.value for s in Scope)}, not {value!r}"
            )
        elif name == "kind" and kinds and value not in kinds:
            raise InvalidInput(f"--set kind takes one of {', '.join(kinds)}, not {value!r}")
        else:
            edits[name] = value
    return edits


def _limits() -> Limits | None:
    """The field limits (and kinds) from the settings; None when the settings file cannot be
    read (the running Cairn judges then)."""
    try:
        return Limits(load_settings(resolve_paths().settings_file))
    except CairnError:
        return None


def _refuse_edits_over_the_limits(
    edits: dict[str, Any], limits: Limits | None, op: str | None = None
) -> None:
    """`--set` texts checked against the store's `limits` (None: the settings file could not be
    read) before the confirmation, as the running Cairn checks them after it (an empty content,
    too many tags, a too long summary). The size of the content is a memory's limit only for a
    proposal `op` about a memory: an identity document has its own (`identity.max_bytes`), which
    the running Cairn checks.

    Raises:
        InvalidInput, TooLarge: naming the option (`--set content: ...`).
    """
    if limits is None:
        return
    for name, value in edits.items():
        try:
            if name == "content" and not value.strip():
                raise InvalidInput("the content cannot be empty", data={"field": "content"})
            if name == "content" and op is not None and op != "identity":
                check_content(value, limits)
            elif name == "summary":
                check_summary(value, limits)
            elif name == "keywords":
                check_keywords(value, limits)
            elif name == "tags":
                check_tags(tuple(value), limits)
        except CairnError as e:
            raise type(e)(f"--set {name}: {e.message}", data=e.data) from e


def checked_before_asking(args: argparse.Namespace, action: str) -> dict[str, Any] | None:
    """`review adopt`'s edits (None for `review reject`), with everything checkable checked
    before the confirmation (until 2026-11-30 a too long `--reason`, a `--set` text over the
    limits and a proposal that does not wait were refused only after the person typed it): the
    values, the options that clash, and - at a terminal - that a proposal waits and takes them.
    """
    edits, limits = None, None
    if action == "adopt":
        limits = _limits()  # the settings file, read once for the command
        edits = _edits(args.set, limits.kinds if limits is not None else ()) if args.set else None
        for name, value in (edits or {}).items():
            texts = value if name == "tags" else [value] if isinstance(value, str) else []
            refuse_a_secret(f"--set {name}", texts, plural=name in ("tags", "keywords"))
        _refuse_edits_over_the_limits(edits or {}, limits)
        _refuse_options_that_clash(args, edits)
    elif args.reason:
        from core.review_decisions import check_reason  # see core.terminal's _LATER

        refuse_a_reason(args.reason, check_reason)
    if at_terminal():
        # Whether a proposal waits, and whether an option applies to it, depends on the
        # proposal: look first (without a terminal the tray asks the person once, and the
        # running Cairn refuses the same after it).
        _look_before_asking(args, action, edits, limits)
    return edits


def _look_before_asking(
    args: argparse.Namespace,
    action: str,
    edits: dict[str, Any] | None,
    limits: Limits | None,
) -> None:
    """Refuse, before the confirmation, options a waiting proposal does not take, and a
    decision none of whose proposals waits (one gone among others that wait is reported with
    their results, as it may be decided meanwhile anyway). `limits`: the command's settings.

    Raises:
        NotFound: no proposal given waits (the first one's error: decided already, by whom).
        InvalidInput: an option a proposal does not take.
    """
    gone: CairnError | None = None
    waiting = 0
    with looking_as_person(f"review {action}") as client:
        for sid in args.ids:
            try:
                item = client.call("review.get", {"id": sid})
            except CairnError as e:
                # The server's error comes back as a RemoteError with its code (until
                # 2026-11-30 `except NotFound` here never matched, and a gone proposal among
                # others given with --set ended the command before asking).
                if e.code is not ErrorCode.NOT_FOUND:
                    raise
                gone = gone or e
                continue
            waiting += 1
            if action == "adopt":
                _refuse_options_it_does_not_take(item, args, edits)
                _refuse_edits_over_the_limits(edits or {}, limits, item["op"])
    if gone is not None and not waiting:
        raise gone


def _refuse_options_that_clash(args: argparse.Namespace, edits: dict[str, Any] | None) -> None:
    """`review adopt` options that cannot go together, refused before the confirmation."""
    if args.action == "edit" and not edits:
        raise InvalidInput("--action edit needs the edits to make: give them with --set")
    if edits and args.action in ("archive", "forget"):
        raise InvalidInput(
            f"--set is not applied with --action {args.action}; to change the memory, use "
            "--action edit"
        )


def _refuse_options_it_does_not_take(
    item: dict[str, Any], args: argparse.Namespace, edits: dict[str, Any] | None
) -> None:
    """An option the proposal `item` does not take, refused before the confirmation rather than
    dropped after it (until 2026-11-30 `--action forget` on an add proposal stored it)."""
    sid, op = item["id"], item["op"]
    kind = f"{sid} is {'an' if op[:1] in 'aeiou' else 'a'} {op} proposal"
    if args.action and op != "feedback":
        raise InvalidInput(f"--action applies to feedback proposals only; {kind}")
    if args.if_revision is not None and op == "add":
        raise InvalidInput(
            "--if-revision applies to a proposal about a memory or an identity document; "
            f"{kind} (a new memory has no revision yet)"
        )
    if edits and op == "forget":
        raise InvalidInput(
            f"--set does not apply to a proposal to forget ({sid}): adopt or reject it as it is"
        )
    if edits and op == "identity" and set(edits) - {"content"}:
        raise InvalidInput(f"--set on an identity proposal ({sid}) takes content only")
    if edits and edits.get("scope") == "session" and not item.get("session_id"):
        raise InvalidInput(
            f"--set scope=session: {sid} was not proposed in a session, and your command has "
            "none to bind it to; choose global, user or project"
        )
