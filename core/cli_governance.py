"""`cairn review` and `cairn policy`: a person's governance from a terminal.

Looking (`review list`, `review show`, `policy show`) needs an interactive terminal; deciding
(`review adopt`, `review reject`, `policy set`) also asks the person to type what they decide.
No flag skips either: an agent with a shell must not be able to adopt its own proposals.
Agents read the policy that applies to them with `cairn policy show --agent NAME`.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any

from core.errors import CairnError, ErrorCode, InvalidInput
from core.model import REASON_CODES, Scope
from core.paths import resolve_paths
from core.settings import load_settings
from core.terminal import (
    at_terminal,
    connect_as_agent,
    connect_as_person,
    emit,
    exit_status,
    hygiene_rules,
    looking_as_person,
    refuse_a_reason,
    refuse_a_secret,
    short,
    visible_flagged,
    when,
)
from core.validation import (
    Limits,
    check_content,
    check_keywords,
    check_summary,
    check_tags,
)
from core.wording import plural, visible

EDIT_FIELDS = ("content", "summary", "kind", "scope", "importance", "keywords")


def add_parsers(sub: Any) -> None:
    review = sub.add_parser("review", help="look at, adopt or reject what agents proposed")
    review_sub = review.add_subparsers(dest="review_command", metavar="ACTION", required=True)
    listing = review_sub.add_parser("list", help="proposals waiting for you, most seen first")
    listing.add_argument("--limit", type=int, default=50, help="at most this many (1-1000)")
    listing.add_argument(
        "--offset", type=int, default=0, help="skip this many (the next page: the hint names it)"
    )
    listing.add_argument("--agent", metavar="NAME", help="only this agent's proposals")
    listing.add_argument(
        "--kind",
        metavar="KIND",
        help="only proposals of this kind (a memory kind, or identity); a proposal to change, "
        "forget or flag a memory has that memory's kind",
    )
    listing.add_argument(
        "--reason", choices=REASON_CODES, help="only proposals waiting for this reason"
    )
    show = review_sub.add_parser("show", help="one proposal, and the memory it would change")
    show.add_argument("id", help="the proposal's id (s_...)")
    adopt = review_sub.add_parser(
        "adopt",
        help="adopt proposals (you type to confirm); --set FIELD=VALUE edits before adopting",
    )
    adopt.add_argument("ids", nargs="+", metavar="ID", help="proposal ids (s_...)")
    adopt.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help=f"edit before adopting ({', '.join(EDIT_FIELDS)}, tags=a,b)",
    )
    adopt.add_argument("--if-revision", type=int, help="adopt onto the target's current revision")
    adopt.add_argument(
        "--allow-flags", action="store_true", help="let the scanner findings it carries pass"
    )
    adopt.add_argument(
        "--action",
        choices=("archive", "forget", "edit"),
        help="for feedback: what to do with the memory (default archive)",
    )
    reject = review_sub.add_parser("reject", help="reject proposals (you type to confirm)")
    reject.add_argument("ids", nargs="+", metavar="ID", help="proposal ids (s_...)")
    reject.add_argument("--reason", help="why (kept, and shown if it is proposed again)")
    for p in (listing, show, adopt, reject):
        p.add_argument("--json", action="store_true", help="print JSON")

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


def describe(item: dict[str, Any], *, now_ms: int | None = None) -> str:
    """A proposal as the person reads it. Every text in it is shown with its control characters
    visible (`visible`): a note, a reason or an earlier rejection's reason stored before
    2026-11-30 may hold a bare carriage return or an escape, and until then `review list` and
    `review show` printed them raw, so the text after one hid the words before it. `now_ms`:
    the time an expiry is compared with (this machine's clock by default)."""
    reasons = ", ".join(f"{r['code']}:{r['detail']}" for r in item["reasons"]) or "-"
    head = (
        f"{item['id']}  {item['op']}  by {item['agent']}"
        f"{'' if item['verified'] else ' (unverified)'}  seen {plural(item['hits'], 'time')}, "
        f"last {when(item['last_seen'])}"
    )
    lines = [head, f"    why: {reasons}"]
    if item.get("target_id"):
        lines.append(
            f"    about: {item['target_id']} (proposed on revision {item['base_revision']})"
        )
    if item.get("content") is not None:
        where = (
            f"{item['scope']}/{item['kind']}"
            if item.get("scope")
            else f"new text of {item['target_id']}"
        )
        flagged = hygiene_rules(item.get("flags"))
        lines.append(f"    {where}: {short(item['content'], 90, flagged)}")
    if item.get("verdict"):
        lines.append(
            f"    feedback: {item['verdict']}"
            + (f": {short(item['note'], 200)}" if item.get("note") else "")
        )
    elif item.get("note"):  # the agent's reason (an identity proposal's): the person reads it
        lines.append(f"    note: {short(item['note'], 200)}")
    if item.get("flags"):
        rules = ", ".join(sorted({f"{f['family']}:{f['rule']}" for f in item["flags"]}))
        lines.append(f"    scanner: {rules}")
    if item.get("rejected_before"):
        lines.append(f"    rejected before: {short(item['rejected_before'], 200)}")
    if item.get("expires_at"):  # the agent's time to live counts from the proposal
        now = time.time_ns() // 1_000_000 if now_ms is None else now_ms
        passed = item["expires_at"] <= now  # adopted then, the memory goes at once
        lines.append(f"    {'expired' if passed else 'expires'}: {when(item['expires_at'])}")
    if item.get("clear_expiry"):
        lines.append("    expiry: cleared (the memory would never expire)")
    if item.get("pinned") is not None:
        lines.append(f"    pin: {'pinned' if item['pinned'] else 'unpinned'}")
    return visible("\n".join(lines))


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


def _known_kinds() -> tuple[str, ...]:
    """The kinds Cairn takes: the built-in ones and `memory.extra_kinds` from the settings; none
    when the settings file cannot be read."""
    limits = _limits()
    return limits.kinds if limits is not None else ()


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


def _narrowed(args: argparse.Namespace) -> dict[str, str | None]:
    """What `review list` was narrowed to, as its options name it."""
    return {"agent": args.agent, "kind": args.kind, "reason": args.reason}


def cmd_review(args: argparse.Namespace) -> int:
    action = args.review_command
    if action not in ("list", "show"):
        return _decide(args, action)
    with looking_as_person(f"review {action}") as client:
        if action == "list":
            asked: dict[str, Any] = {"limit": args.limit, "offset": args.offset}
            asked |= {k: v for k, v in _narrowed(args).items() if v is not None}
            data = client.call("review.list", asked)
        else:
            item = client.call("review.get", {"id": args.id})
    if action == "list":

        def listing() -> None:
            if not data["items"]:
                if args.offset and data["total"]:
                    print(f"nothing past the first {args.offset} ({data['total']} wait)")
                else:
                    print("nothing waits for review")
            for entry in data["items"]:
                print(describe(entry))
            shown = len(data["items"])
            after = args.offset + shown
            if data["total"] > after and shown:
                # the next page, not a bigger --limit: past 1,000 that is refused
                again = "".join(
                    f"--{k} {shlex.quote(v)} " for k, v in _narrowed(args).items() if v is not None
                )
                print(f"... and {data['total'] - after} more (next: {again}--offset {after})")

        emit(args, data, listing)
        return 0

    def one() -> None:
        print(describe(item))
        if item.get("content") is not None:
            flagged = hygiene_rules(item.get("flags"))
            print(f"\nproposed text:\n{visible_flagged(item['content'], flagged)}")
        target = item.get("target")
        if target and "doc" in target:  # an identity document's current version
            print(f"\ncurrent {target['doc']} v{target['version']}:")
            print(visible(target["content"]))
        elif target:
            print(f"\ncurrent memory {target['id']}@{target['revision']}:")
            print(visible(target["content"]))

    emit(args, item, one)
    return 0


def _decide(args: argparse.Namespace, action: str) -> int:
    """`review adopt` and `review reject` of one or more proposals, after one confirmation."""
    ids = args.ids = list(dict.fromkeys(args.ids))  # one decision each (the same id twice failed)
    word = "adopt" if action == "adopt" else "reject"
    expected = f"{word} {ids[0]}" if len(ids) == 1 else f"{word} {len(ids)}"
    prompt = (
        f"{word.capitalize()} {plural(len(ids), 'proposal')} ({', '.join(ids)})"
        f"{' with your edits' if getattr(args, 'set', None) else ''}?"
    )
    try:  # everything that cannot work is refused before the confirmation
        edits = _checked_before_asking(args, action)
    except CairnError as e:
        print(f"cairn: {visible(e.message)}", file=sys.stderr)
        return exit_status(e)
    results: list[dict[str, Any]] = []
    failed: CairnError | None = None
    # A proposal the person makes project-scope lands in the folder the command runs in: only
    # then is it bound (binding registers the folder as a workspace).
    lands_here = (edits or {}).get("scope") == "project"
    with connect_as_person(prompt, expected, bind_cwd=lands_here) as client:
        for sid in ids:  # each on its own: one that fails does not stop or hide the others
            if action == "adopt":
                params: dict[str, Any] = {"id": sid, "allow_flags": args.allow_flags}
                if edits:
                    params["edits"] = edits
                if args.if_revision is not None:
                    params["if_revision"] = args.if_revision
                if args.action:
                    params["action"] = args.action
                method = "review.adopt"
            else:
                params = {"id": sid}
                if args.reason:
                    params["reason"] = args.reason
                method = "review.reject"
            try:
                results.append(client.call(method, params))
            except CairnError as e:
                failed = failed or e
                error = {"error": e.code.label, "message": e.message, "data": e.data}
                results.append({"suggestion_id": sid, "error": error})

    def human() -> None:
        for r in results:
            if "error" in r:
                print(visible(f"{r['suggestion_id']} not {word}ed: {r['error']['message']}"))
                current = r["error"]["data"].get("current_revision")
                if action == "adopt" and current is not None:
                    print(
                        f"  to adopt it onto that: cairn review adopt {r['suggestion_id']} "
                        f"--if-revision {current}"
                    )
                continue
            edited = f" (edited: {', '.join(r['edited'])})" if r.get("edited") else ""
            where = (
                f" -> {r['memory_id']}@{r['revision']}"
                if r.get("memory_id") and r.get("revision") is not None
                else ""
            )
            if r.get("op") == "forget" and r["decision"] == "adopted" and r.get("memory_id"):
                where = f" -> forgot {r['memory_id']}"  # not a revision to read: it is gone
            print(visible(f"{r['suggestion_id']} {r['decision']}{where}{edited}"))

    emit(args, results, human)
    return exit_status(failed) if failed is not None else 0


def _checked_before_asking(args: argparse.Namespace, action: str) -> dict[str, Any] | None:
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
    "review": cmd_review,
    "policy": cmd_policy,
}
