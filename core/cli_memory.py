"""`cairn add`, `search`, `get`, `list`, `forget` and `context`: an agent's memory commands, or
- typed at a terminal with no agent named - a person's own `add`, `get`, `forget` and
`search --all-workspaces`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from core.cli_flags import command
from core.errors import CairnError, InvalidInput, NotRunning, TooLarge
from core.terminal import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    UTF8_BOM,
    connect,
    connect_as_person,
    describe_write,
    emit,
    label_untrusted,
    memory_line,
    open_input,
    print_or_drop,
    read_stdin,
    recalled,
    refuse_a_reason,
    short,
    speaks_for_a_person,
    when,
    write_status,
)
from core.wording import plural, visible


def add_parsers(sub: Any) -> None:
    add = command(sub, "add", "store a memory (or many, with --jsonl)")
    add.description = (
        "Store a memory (or many, with --jsonl). Typed at a terminal with no --agent, it is your "
        "own memory (author tier human); from a script or an agent it is the agent's."
    )
    add.add_argument("content", nargs="?", help="the memory's text; '-' reads standard input")
    add.add_argument(
        "--kind",
        default="fact",
        help="fact (default), preference, convention, procedure, pitfall, correction, insight, "
        "idea",
    )
    add.add_argument(
        "--scope", default="project", help="global, user, project (default) or session"
    )
    add.add_argument("--tag", action="append", default=[], dest="tags", help="a tag (repeatable)")
    add.add_argument("--importance", type=int, help="1-5 (default 3)")
    add.add_argument("--summary", help="a short form of the memory")
    add.add_argument("--keywords", help="extra search terms (write-time enrichment)")
    add.add_argument(
        "--ttl", type=int, metavar="SECONDS", dest="ttl_seconds", help="expire after this long"
    )
    add.add_argument("--dedupe-key", help="the one memory about this key: a second add updates it")
    add.add_argument("--idempotency-key", help="a retried add with this key creates nothing new")
    add.add_argument(
        "--origin",
        choices=("explicit", "extracted"),
        help="asked to remember, or extracted by a model",
    )
    add.add_argument("--source", help="where this came from")
    add.add_argument(
        "--jsonl",
        metavar="FILE",
        help="add one memory per line of FILE ('-': stdin), each line a JSON object with the "
        "fields of memory.write; one result per line",
    )

    search = command(sub, "search", "search memories")
    search.add_argument("query", help="what to look for, in your own words")
    search.add_argument("--limit", type=int, default=10, help="at most this many results (1-100)")
    search.add_argument(
        "--variant",
        action="append",
        default=[],
        dest="variants",
        help="a rephrasing of the query (repeatable)",
    )
    search.add_argument(
        "--all-workspaces", action="store_true", help="broaden to every workspace (if allowed)"
    )
    search.add_argument("--history", action="store_true", help="include superseded memories")

    get = command(sub, "get", "show one memory")
    get.add_argument("id", help="the memory's id (m_...)")
    get.add_argument("--history", action="store_true", help="with every revision and relation")

    lst = command(sub, "list", "list memories, newest first")
    lst.add_argument("--scope", action="append", default=[], help="only this scope (repeatable)")
    lst.add_argument("--kind", action="append", default=[], help="only this kind (repeatable)")
    lst.add_argument(
        "--status",
        action="append",
        default=[],
        help="active, superseded, archived or forgotten (repeatable; default: active, archived)",
    )
    lst.add_argument(
        "--tag", action="append", default=[], dest="tags", help="only with this tag (repeatable)"
    )
    lst.add_argument("--limit", type=int, default=50, help="at most this many (1-500)")
    lst.add_argument("--cursor", help="go on from where the last page stopped ('more: ...')")
    lst.add_argument("--expired", action="store_true", help="include expired memories")

    forget = command(sub, "forget", "forget a memory for good")
    forget.description = (
        "Forget a memory for good. At a terminal with no --agent you forget it as yourself, "
        "after typing the confirmation; an agent cannot forget a memory in a person's words."
    )
    forget.add_argument("id", help="the memory's id (m_...)")
    forget.add_argument("--reason", help="why, kept with the tombstone (never the text)")

    context = command(sub, "context", "a context bundle for a query, as an agent would get it")
    context.add_argument("query", help="what the agent is about to do, in its own words")
    context.add_argument(
        "--max-bytes", type=int, help="the bundle's budget (default: the context.max_bytes setting)"
    )
    context.add_argument("--limit", type=int, default=20, help="at most this many memories (1-50)")
    context.add_argument(
        "--variant",
        action="append",
        default=[],
        dest="variants",
        help="a rephrasing of the query (repeatable)",
    )
    context.add_argument(
        "--tier",
        action="append",
        default=[],
        dest="tiers",
        help="author tiers to include (repeatable; default: the context.tiers setting)",
    )


_ADD_FIELDS = (
    "kind",
    "scope",
    "importance",
    "summary",
    "keywords",
    "ttl_seconds",
    "dedupe_key",
    "idempotency_key",
    "origin",
    "source",
)


def cmd_add(args: argparse.Namespace) -> int:
    if args.jsonl:
        if args.content is not None:
            print("cairn add: give a memory's text or --jsonl FILE, not both", file=sys.stderr)
            return EXIT_USAGE
        return add_jsonl(args)
    content = args.content
    if content is None or content == "-":
        content = read_stdin()
    params: dict[str, Any] = {"content": content}
    params.update({k: getattr(args, k) for k in _ADD_FIELDS if getattr(args, k) is not None})
    if args.tags:
        params["tags"] = args.tags
    with connect(args, as_person=speaks_for_a_person(args), stores_here=True) as client:
        result = client.call("memory.write", params)
    emit(args, result, lambda: print(describe_write(result)))
    return write_status(result)


def add_jsonl(args: argparse.Namespace) -> int:
    """One memory.write per line; one JSON result (or error) per line, in order. A line too
    large for a request (refused unparsed and unsent) or not UTF-8 is reported and skipped;
    the others are all sent, also when nothing reads the output any more (`| head`)."""
    source = sys.stdin.buffer if args.jsonl == "-" else open_input(args.jsonl)
    failures = 0
    with source, connect(args, as_person=speaks_for_a_person(args), stores_here=True) as client:
        largest = int(client.hello.get("limits", {}).get("max_frame_bytes", 1 << 20))
        for number, line in enumerate(source, 1):
            # A byte order mark (Notepad) is no JSON: until 2026-11-30 the first line failed
            # "Unexpected UTF-8 BOM".
            raw = line.removeprefix(UTF8_BOM) if number == 1 else line
            if not raw.strip():
                continue
            try:
                # A line larger than a request can be is refused before it is parsed (the
                # client's own check, on the request around it, would come after).
                size = len(raw.rstrip(b"\r\n"))
                if size > largest:
                    raise TooLarge(
                        f"the line is {size:,} bytes, more than the {largest:,} bytes Cairn "
                        "reads in one request (setting server.max_frame_bytes); nothing was sent"
                    )
                params = json.loads(raw.decode("utf-8"))
                if not isinstance(params, dict):
                    raise InvalidInput("each line must be a JSON object")
                out: dict[str, Any] = {"line": number} | client.call("memory.write", params)
                if out.get("status") == "refused":
                    failures += 1
            except UnicodeDecodeError as e:
                failures += 1
                out = {
                    "line": number,
                    "error": {"error": "parse_error", "message": f"not valid UTF-8: {e.reason}"},
                }
            except json.JSONDecodeError as e:
                failures += 1
                out = {
                    "line": number,
                    "error": {"error": "parse_error", "message": f"not valid JSON: {e}"},
                }
            except NotRunning as e:  # the connection is gone: nothing after this line was sent
                raise NotRunning(
                    f"{e.message} at line {number}: no answer came for it (it may or may not be "
                    "stored), and the lines after it were not sent"
                ) from None
            except CairnError as e:
                failures += 1
                out = {"line": number, "error": {"error": e.code.label, "message": e.message}}
            print_or_drop(json.dumps(out, ensure_ascii=False))
    return EXIT_FAILED if failures else EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"query": args.query, "limit": args.limit}
    if args.variants:
        params["variants"] = args.variants
    if args.all_workspaces:
        params["horizon"] = "all"
    if args.history:
        params["include_history"] = True
    # Every workspace, asked for at a terminal: the person's own search (an agent may not).
    with connect(args, as_person=args.all_workspaces and speaks_for_a_person(args)) as client:
        result = client.call("memory.search", params)

    def human() -> None:
        print(
            f"presence: {result['presence']} ({result['matched']} matched"
            f"{', broadened to every workspace' if result['broadened'] else ''})"
        )
        if result["results"]:
            label_untrusted(args)
        for hit in result["results"]:
            print(memory_line(hit))

    recalled(args, result, human)
    return EXIT_OK


def cmd_get(args: argparse.Namespace) -> int:
    # At a terminal the id is the person's to read, whichever workspace holds it.
    with connect(args, as_person=speaks_for_a_person(args)) as client:
        m = client.call("memory.get", {"id": args.id, "history": args.history})

    def human() -> None:
        label_untrusted(args)
        print(memory_line(m))
        tags = ", ".join(m["tags"]) or "-"
        print(
            visible(
                f"    kind {m['kind']}, importance {m['importance']}, tags {tags}, "
                f"agent {m.get('agent') or '-'}, used {plural(m['use_count'], 'time')}"
            )
        )
        if m.get("expires_at"):
            print(f"    {'expired' if m.get('expired') else 'expires'} {when(m['expires_at'])}")
        for r in m.get("revisions", []):
            by = visible(f"r{r['revision']} {r['action']} by {r['actor']}")
            print(f"  {by}: {short(r['content'], 80)}")

    recalled(args, m, human)
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"limit": args.limit}
    for name in ("scope", "kind", "status", "tags"):
        if getattr(args, name):
            params[name] = getattr(args, name)
    if args.cursor:
        params["cursor"] = args.cursor
    if args.expired:
        params["include_expired"] = True
    with connect(args) as client:
        page = client.call("memory.list", params)

    def human() -> None:
        if not page["items"]:
            print("no memories match" if len(params) > 1 else "no memories in view")
        else:
            label_untrusted(args)
        for m in page["items"]:
            print(memory_line(m))
        if page["next_cursor"]:
            print(f"more: --cursor {page['next_cursor']}")

    recalled(args, page, human)
    return EXIT_OK


def cmd_forget(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"id": args.id}
    if args.reason:
        params["reason"] = args.reason
    if speaks_for_a_person(args):
        if args.reason:  # refused before the confirmation, not after it
            refuse_a_reason(args.reason)
        client = connect_as_person(
            f"Forget memory {args.id} for good? Its text is erased from every revision.",
            f"forget {args.id}",
        )
    else:
        client = connect(args)
    with client:
        result = client.call("memory.forget", params)
    if result.get("status") in ("pending", "refused"):
        emit(args, result, lambda: print(describe_write(result)))
        return write_status(result)
    emit(args, result, lambda: print(f"forgot {result['forgotten']}"))
    return EXIT_OK


def cmd_context(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"query": args.query, "limit": args.limit}
    if args.max_bytes is not None:
        params["max_bytes"] = args.max_bytes
    if args.variants:
        params["variants"] = args.variants
    if args.tiers:
        params["tiers"] = args.tiers
    with connect(args) as client:
        bundle = client.call("context.build", params)

    def human() -> None:
        if bundle["text"]:
            print(visible(bundle["text"]), end="")
        elif bundle["omitted_budget"]:
            print("(nothing fitted in --max-bytes; a larger budget lets the matches in)")
        else:
            tiers = ", ".join(args.tiers) if args.tiers else "the tiers in context.tiers"
            print(f"(nothing relevant in memory among {tiers}; --tier widens the search)")
        print(
            f"-- {plural(len(bundle['items']), 'item')}, {bundle['bytes']} bytes; matched "
            f"{bundle['matched']}, left out for the budget {bundle['omitted_budget']}, too weak "
            f"{bundle['omitted_weak']}, cut by the limit {bundle['omitted_limit']}"
            + (
                f"; {bundle['partners']} matched as the other side of a dispute"
                if bundle.get("partners")
                else ""
            ),
            file=sys.stderr,
        )

    recalled(args, bundle, human)  # its text carries its own label, inside the fence
    return EXIT_OK


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "add": cmd_add,
    "search": cmd_search,
    "get": cmd_get,
    "list": cmd_list,
    "forget": cmd_forget,
    "context": cmd_context,
}
