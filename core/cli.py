"""The `cairn` command line: argument parsing, the commands, the one error edge, exit codes.

Every command except `serve`, `paths` and `reindex` talks to the running Cairn through the socket
client (starting the headless daemon when none runs). Ordinary commands connect as an agent
(`--agent`, default `cli`, verified when its token is in the token store). `add` typed at a
terminal with no agent named is the person's own write (author tier `human`), and `forget` there
is the person's, after a typed confirmation. People's commands (`agent ...`, `stop`) connect as a
person and need an interactive terminal plus a typed confirmation - no flag skips it.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from core import (
    __version__,
    cli_archive,
    cli_autostart,
    cli_backup,
    cli_governance,
    cli_identity,
    cli_workspace,
)
from core.client import Client
from core.errors import CairnError, InvalidInput, NotRunning
from core.paths import resolve_paths
from core.terminal import (
    UTF8_BOM,
    NotConfirmed,
    at_terminal,
    connect,
    connect_as_person,
    describe_write,
    emit,
    exit_status,
    label_untrusted,
    looking_as_person,
    memory_line,
    open_input,
    print_or_drop,
    read_stdin,
    recalled,
    refuse_a_reason,
    short,
    speaks_for_a_person,
    when,
    working_folder,
    write_status,
)
from core.wording import plural, visible

EXIT_OK = 0
EXIT_FAILED = 1  # a confirmation not given, or some lines of a bulk add failed
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

log = logging.getLogger("cairn")


# -- the parser --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn",
        description="Cairn: local long-term memory for AI agents, with a person in charge. "
        "With no command, `cairn` starts the tray application (the windows and the agents' "
        "socket); `cairn serve` is Cairn without windows.",
    )
    parser.add_argument("--version", action="version", version=f"cairn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(
        name: str, help_text: str, *, connects: bool = True, answers: bool = True
    ) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if answers:  # a command that prints an answer can print it as JSON
            p.add_argument("--json", action="store_true", help="print JSON")
        if connects:
            p.add_argument(
                "--agent", help="agent name for this connection (default: $CAIRN_AGENT or cli)"
            )
            p.add_argument(
                "--workspace", default=None, help="workspace directory (default: the current one)"
            )
            p.add_argument("--session", help="session id for session-scoped memories")
        return p

    serve = command(
        "serve", "run the headless Cairn daemon in the foreground", connects=False, answers=False
    )
    serve.add_argument(
        "--janitor-interval",
        type=_janitor_interval,
        default=3600.0,
        metavar="SECONDS",
        help="how often housekeeping runs, from every 1 s to at most 86400 s (a day) "
        "(default: hourly)",
    )
    command("status", "is Cairn running, where, and what it holds", connects=False)
    command("health", "the health snapshot (at a terminal: yours; --agent: an agent's)")
    command("paths", "print where Cairn keeps its files", connects=False)
    command(
        "reindex",
        "rebuild the search index from the memory tables (Cairn must be stopped)",
        connects=False,
    )
    command("stop", "stop the running Cairn (asks you to confirm)", connects=False)
    mcp_help = "serve Cairn to an MCP client over stdio"
    mcp = sub.add_parser("mcp", help=mcp_help, description=mcp_help)
    mcp.add_argument("--agent", help="agent name (default: mcp-<the MCP client's name>)")
    mcp.add_argument("--workspace", help="workspace (default: the client's root, else the cwd)")

    add_memory_commands(command)

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
    cli_governance.add_parsers(sub)
    cli_backup.add_parsers(sub)
    cli_archive.add_parsers(sub)
    cli_identity.add_parsers(sub)
    cli_workspace.add_parsers(sub)
    cli_autostart.add_parsers(sub)
    _describe(parser)
    return parser


def _describe(parser: argparse.ArgumentParser) -> None:
    """Every command's `--help` starts with what it does: a subcommand with no description of
    its own gets the line its parent's listing shows for it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            said = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                if sub.description is None and said.get(name):
                    sub.description = said[name]
                _describe(sub)


def add_memory_commands(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """add, search, get, list, forget, context."""
    add = command("add", "store a memory (or many, with --jsonl)")
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

    search = command("search", "search memories")
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

    get = command("get", "show one memory")
    get.add_argument("id", help="the memory's id (m_...)")
    get.add_argument("--history", action="store_true", help="with every revision and relation")

    lst = command("list", "list memories, newest first")
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

    forget = command("forget", "forget a memory for good")
    forget.description = (
        "Forget a memory for good. At a terminal with no --agent you forget it as yourself, "
        "after typing the confirmation; an agent cannot forget a memory in a person's words."
    )
    forget.add_argument("id", help="the memory's id (m_...)")
    forget.add_argument("--reason", help="why, kept with the tombstone (never the text)")

    context = command("context", "a context bundle for a query, as an agent would get it")
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


# -- commands ----------------------------------------------------------------------------------


def cmd_paths(args: argparse.Namespace) -> int:
    paths = resolve_paths().as_dict()

    def human() -> None:
        for name, value in paths.items():
            print(f"{name:9} {value}")

    emit(args, paths, human)
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from core.daemon import serve_forever

    configure_logging()
    serve_forever(resolve_paths(), janitor_interval=args.janitor_interval)
    return EXIT_OK


def cmd_health(args: argparse.Namespace) -> int:
    as_person = args.agent is None and at_terminal()
    # a person's snapshot is the whole store's (no workspace); an agent's depends on its own
    with connect(args, as_person=as_person) as client:
        snapshot = client.call("health.get")

    def lines(value: Any, indent: str = "") -> None:
        for key, item in value.items():
            if isinstance(item, dict) and item:
                print(f"{indent}{key}:")
                lines(item, indent + "  ")
            elif isinstance(item, list) and item:  # e.g. notes_errors: one entry a line
                print(f"{indent}{key}:")
                for entry in item:
                    if isinstance(entry, dict):
                        print(f"{indent}  - " + ", ".join(f"{k}: {v}" for k, v in entry.items()))
                    else:
                        print(f"{indent}  - {entry}")
            elif key in ("last_write", "last_search", "last_seen", "at") and item:
                print(f"{indent}{key}: {when(int(item))}")
            else:
                print(f"{indent}{key}: {'-' if item in (None, {}, []) else item}")

    emit(args, snapshot, lambda: lines(snapshot))
    return EXIT_OK


def cmd_status(args: argparse.Namespace) -> int:
    from core.errors import NotRunning

    paths = resolve_paths()
    try:
        # At a terminal it is a person asking (whole-store counts, no workspace: binding the
        # folder would register it); otherwise an agent's share, which its folder's is part of.
        person = at_terminal()
        with Client.connect(
            paths,
            autostart=False,
            agent="cli",
            role="human" if person else "agent",
            workspace=None if person else working_folder(needed=False),
        ) as client:
            status = client.call("status") | {"running": True}
    except NotRunning:
        from core.runtime import socket_path

        data = {"running": False, "socket": str(socket_path(paths))}
        emit(args, data, lambda: print(f"Cairn is not running (socket {data['socket']})"))
        return NotRunning.code.exit_status
    by_scope = ", ".join(f"{k} {v}" for k, v in sorted(status["by_scope"].items())) or "none"
    emit(
        args,
        status,
        lambda: print(
            f"Cairn {status['version']} is running (pid {status['pid']})\n"
            f"socket    {status['socket']}\ndatabase  {status['database']}\n"
            f"memories  {status['memories']} ({by_scope})"
            + (f", {status['expired']} expired" if status.get("expired") else "")
            + "\n"
            f"agents' tokens in {status['token_store']}"
            + (
                f"\nreview    {status['review_pending']} waiting"
                if status["review_pending"]
                else ""
            )
            + ("\ncapture   PAUSED" if status["capture_paused"] else "")
            + "".join(f"\nwarning   {w}" for w in status["warnings"].values())
        ),
    )
    return EXIT_OK


def cmd_reindex(args: argparse.Namespace) -> int:
    from core.app import Cairn
    from core.terminal import WHERE_CAIRN_LOOKS, refuse_without_store

    paths = resolve_paths()
    # An index of no store is none to rebuild: opening it would create an empty store (until
    # 2026-11-30 it did, and said "reindexed 0 memories").
    refuse_without_store(paths, f"nothing to reindex - {WHERE_CAIRN_LOOKS}")
    cairn = Cairn.open(paths)
    try:
        started = time.perf_counter()
        from core import search_index  # see core.terminal's _LATER

        count = cairn.store.writer.run(lambda tx: search_index.rebuild(tx.conn))
        took = time.perf_counter() - started
    finally:
        cairn.close()
    emit(
        args,
        {"reindexed": count, "seconds": round(took, 3)},
        lambda: print(f"reindexed {plural(count, 'memory', 'memories')} in {took:.2f} s"),
    )
    return EXIT_OK


def cmd_stop(args: argparse.Namespace) -> int:
    from core.errors import NotRunning
    from core.runtime import probe, socket_path

    path = socket_path(resolve_paths())
    if not probe(path):
        raise NotRunning(f"Cairn is not running (nothing answers on {path})")
    with connect_as_person(  # never start Cairn just to stop it
        "Stop the running Cairn? Agents will lose their connections.", "stop", autostart=False
    ) as client:
        client.call("daemon.shutdown")
    emit(args, {"stopping": True}, lambda: print("Cairn is stopping"))
    return EXIT_OK


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


JANITOR_INTERVAL_MAX_S = 86_400


def _janitor_interval(text: str) -> float:
    """`--janitor-interval`: 0 made housekeeping run back to back, a core at 100%; inf (or 1e300)
    ran it once and never again - no purges, no scheduled backups, no daily integrity check."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a finite number of seconds; "
            f"give 1 to {JANITOR_INTERVAL_MAX_S} (a day)"
        )
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} s is too short; give 1 s or more")
    if value > JANITOR_INTERVAL_MAX_S:
        raise argparse.ArgumentTypeError(
            f"{text} s is too long; give at most {JANITOR_INTERVAL_MAX_S} s (a day)"
        )
    return value


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
    large for a request (the client refuses it unsent) or not UTF-8 is reported and skipped;
    the others are all sent, also when nothing reads the output any more (`| head`)."""
    source = sys.stdin.buffer if args.jsonl == "-" else open_input(args.jsonl)
    failures = 0
    with source, connect(args, as_person=speaks_for_a_person(args), stores_here=True) as client:
        for number, line in enumerate(source, 1):
            # A byte order mark (Notepad) is no JSON: until 2026-11-30 the first line failed
            # "Unexpected UTF-8 BOM".
            raw = line.removeprefix(UTF8_BOM) if number == 1 else line
            if not raw.strip():
                continue
            try:
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


def cmd_mcp(args: argparse.Namespace) -> int:
    from core import mcp_bridge  # the MCP SDK loads only for this command

    return mcp_bridge.run(args)


# -- the edge ----------------------------------------------------------------------------------


def configure_logging(verbose: bool = False) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "serve": cmd_serve,
    "status": cmd_status,
    "health": cmd_health,
    "paths": cmd_paths,
    "reindex": cmd_reindex,
    "stop": cmd_stop,
    "add": cmd_add,
    "search": cmd_search,
    "get": cmd_get,
    "list": cmd_list,
    "forget": cmd_forget,
    "context": cmd_context,
    "agent": cmd_agent,
    "mcp": cmd_mcp,
    **cli_governance.HANDLERS,
    **cli_backup.HANDLERS,
    **cli_archive.HANDLERS,
    **cli_identity.HANDLERS,
    **cli_workspace.HANDLERS,
    **cli_autostart.HANDLERS,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        args = parser.parse_args(["serve"])
    if args.command not in ("serve", "mcp"):  # those log with times; a command says "cairn: "
        logging.basicConfig(
            level=logging.WARNING, format="cairn: %(levelname)s: %(message)s", stream=sys.stderr
        )
    try:
        return HANDLERS[args.command](args)
    except NotConfirmed as e:
        print(f"cairn: {visible(e.message)}", file=sys.stderr)
        return EXIT_FAILED
    except CairnError as e:
        # an error names what it was given (an id, a name, a path): shown, never obeyed
        print(f"cairn: {visible(e.message)}", file=sys.stderr)
        return exit_status(e)  # a secret is 77 wherever it was found
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
