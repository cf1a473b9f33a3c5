"""`cairn review`: a person looks at, adopts or rejects what agents proposed, from a terminal.

Looking (`review list`, `review show`) needs an interactive terminal; deciding (`review adopt`,
`review reject`) also asks the person to type what they decide. No flag skips either: an agent
with a shell must not be able to adopt its own proposals. What can be refused is refused before
the confirmation (`core.cli_review_checks`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any

from core.cli_review_checks import EDIT_FIELDS, checked_before_asking
from core.errors import CairnError
from core.model import REASON_CODES
from core.terminal import (
    connect_as_person,
    emit,
    exit_status,
    hygiene_rules,
    looking_as_person,
    short,
    visible_flagged,
    when,
)
from core.wording import plural, visible


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
        edits = checked_before_asking(args, action)
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


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "review": cmd_review,
}
