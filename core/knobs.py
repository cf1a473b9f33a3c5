"""Every setting Cairn reads, declared once as data (`KNOBS`), and the reference table of them in
`docs/settings.md`.

The table is the single declaration: the loader (`core.settings`) validates against it,
`docs/settings.md` is checked against it by a test, and the windows render their settings forms
from it.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.knob import Knob, shown_number
from core.model import Tier

KNOBS: tuple[Knob, ...] = (
    Knob(
        "store.synchronous",
        str,
        "NORMAL",
        "SQLite durability. NORMAL (with WAL) survives a killed or crashed Cairn without losing an "
        "acknowledged write; an OS crash or power loss may roll back the last commits. FULL also "
        "survives power loss and is several times slower on writes.",
        choices=("NORMAL", "FULL"),
    ),
    Knob(
        "store.busy_timeout_ms",
        int,
        5000,
        "How long a database connection waits for a lock before reporting the store busy.",
        minimum=0,
        maximum=600_000,
    ),
    Knob(
        "store.quick_check_on_open",
        bool,
        True,
        "Run SQLite's quick_check when the store opens, and refuse to start on a damaged file.",
    ),
    Knob(
        "limits.max_content_bytes",
        int,
        32768,
        "Largest memory content accepted, in UTF-8 bytes. Larger writes are refused, never cut.",
        minimum=256,
        maximum=1_000_000,
    ),
    Knob(
        "limits.max_summary_bytes",
        int,
        1024,
        "Largest summary accepted, in UTF-8 bytes.",
        minimum=32,
        maximum=65536,
    ),
    Knob(
        "limits.max_keywords_bytes",
        int,
        2048,
        "Largest `keywords` enrichment text accepted, in UTF-8 bytes.",
        minimum=32,
        maximum=65536,
    ),
    Knob("limits.max_tags", int, 16, "Most tags one memory may carry.", minimum=0, maximum=256),
    Knob(
        "limits.max_tag_chars",
        int,
        48,
        "Longest tag accepted, in characters.",
        minimum=1,
        maximum=256,
    ),
    Knob(
        "limits.max_source_chars",
        int,
        512,
        "Longest free-form provenance `source` string accepted, in characters.",
        minimum=16,
        maximum=4096,
    ),
    Knob(
        "memory.extra_kinds",
        tuple,
        (),
        "Kinds of memory to accept beyond the built-in ones (fact, preference, convention, "
        "procedure, pitfall, correction, insight, idea). Lowercase words.",
        words=True,
    ),
    Knob(
        "search.agents_may_broaden",
        bool,
        False,
        "Let agent connections search every workspace when they ask explicitly (horizon 'all'). "
        "Off: an agent only ever sees its own workspace, user and global memories.",
    ),
    Knob(
        "context.max_bytes",
        int,
        8192,
        "Default byte budget of a context bundle when the caller gives none.",
        minimum=256,
        maximum=1_000_000,
    ),
    Knob(
        "context.tiers",
        tuple,
        ("human", "explicit"),
        "Author tiers a context bundle takes by default (human, explicit, derived, llm).",
        items=tuple(t.value for t in Tier),
    ),
    Knob(
        "server.max_frame_bytes",
        int,
        1_048_576,
        "Largest request frame (one line of JSON) accepted, in bytes; a larger one is answered "
        "with an error and the connection closed.",
        minimum=4096,
        maximum=64 * 1_048_576,
    ),
    Knob(
        "server.frame_timeout_s",
        float,
        10.0,
        "Seconds a client has to finish a frame it started, and to take any of its answers "
        "once its socket is full; a slower one is disconnected.",
        minimum=0.5,
        maximum=600,
    ),
    Knob(
        "server.idle_timeout_s",
        float,
        900.0,
        "Seconds a connection may stay silent before it is closed.",
        minimum=1,
        maximum=86400,
    ),
    Knob(
        "server.hello_timeout_s",
        float,
        5.0,
        "Seconds a new connection has to send its hello (with its token on TCP).",
        minimum=0.5,
        maximum=120,
    ),
    Knob(
        "server.max_connections",
        int,
        64,
        "Most connections served at once; more are refused with an error.",
        minimum=1,
        maximum=4096,
    ),
    Knob(
        "server.max_tcp_unauthenticated",
        int,
        16,
        "Most loopback TCP connections waiting for their hello at once; more are refused. They "
        "do not count against server.max_connections, so they never take the Unix socket's.",
        minimum=1,
        maximum=4096,
    ),
    Knob(
        "server.max_in_flight",
        int,
        16,
        "Most requests one connection may have in flight; more are refused (rate_limited).",
        minimum=1,
        maximum=1024,
    ),
    Knob(
        "server.max_push_backlog_bytes",
        int,
        8 * 1024 * 1024,
        "Most bytes of pushed `changes` a subscriber may leave unread; past it the connection is "
        "unsubscribed and told where to catch up from with changes.since.",
        minimum=64 * 1024,
        maximum=1024 * 1024 * 1024,
    ),
    Knob(
        "server.workers",
        int,
        8,
        "Threads that run service calls for the socket server.",
        minimum=1,
        maximum=64,
    ),
    Knob(
        "server.search_workers",
        int,
        1,
        "Threads that run searches and context bundles. Search scoring is CPU-bound Python, so "
        "on CPython extra threads mostly contend for the interpreter lock: on 2 CPUs, 8 threads "
        "served fewer searches per second than 1 (see docs/performance.md).",
        minimum=1,
        maximum=16,
    ),
    Knob(
        "server.tcp_port",
        int,
        0,
        "Also listen on loopback TCP (127.0.0.1 and ::1) at this port, with tokens required; 0 "
        "is off. Never binds another address.",
        minimum=0,
        maximum=65535,
    ),
    Knob(
        "security.require_tokens",
        bool,
        False,
        "Refuse agent connections on the Unix socket that present no token. TCP always "
        "requires one.",
    ),
    Knob(
        "security.confirm_terminals_in_tray",
        bool,
        False,
        "While the tray runs, ask in the tray about every person's command, also those typed "
        "at a terminal (a program that fakes a terminal then still needs your click).",
    ),
    Knob(
        "review.max_items",
        int,
        200,
        "Proposals the review queue holds. Beyond this the least-seen, longest-unseen go; each "
        "eviction is recorded and counted in health, never silent.",
        minimum=10,
        maximum=100_000,
    ),
    Knob(
        "audit.max_events",
        int,
        200_000,
        "Audit events kept in the database. Past this, the oldest are rotated into JSON-lines "
        "files under the state directory (the export format) until 90% remain, so a store "
        "nobody writes to makes no new files - never dropped.",
        minimum=1000,
        maximum=100_000_000,
    ),
    Knob(
        "lifecycle.expired_retention_days",
        float,
        7.0,
        "Days an expired memory is kept (hidden, shown on request) before it is purged.",
        minimum=0,
        maximum=3650,
    ),
    Knob(
        "lifecycle.archive_unused_days",
        float,
        180.0,
        "Days a project memory may go unused (not recalled, not changed) before the janitor "
        "archives it; 0 turns this off. Pinned memories are never archived, and importance 4 "
        "and 5 get twice as long. Archived memories stay searchable on request; nothing is "
        "deleted.",
        minimum=0,
        maximum=36_500,
    ),
    Knob(
        "lifecycle.session_retention_days",
        float,
        7.0,
        "Days after a session was last seen before its session-scope memories expire (and, "
        "after lifecycle.expired_retention_days, are purged); 0 turns this off.",
        minimum=0,
        maximum=3_650,
    ),
    Knob(
        "backup.interval_hours",
        float,
        24.0,
        "Hours between automatic online backups while Cairn runs; 0 turns them off. A backup is "
        "also taken before any schema migration.",
        minimum=0,
        maximum=8_760,
        least_on=0.01,  # 36 s; the Settings window shows hundredths, so less would read "Off"
    ),
    Knob(
        "backup.keep_daily",
        int,
        7,
        "Daily backups kept (the newest of each day).",
        minimum=1,
        maximum=366,
    ),
    Knob(
        "backup.keep_weekly",
        int,
        4,
        "Weekly backups kept beyond the daily ones (the newest of each ISO week).",
        minimum=0,
        maximum=520,
    ),
    Knob(
        "identity.max_bytes",
        int,
        8_192,
        "Largest identity document version accepted, in UTF-8 bytes (each document is injected "
        "into agents' prompts, so it stays small).",
        minimum=256,
        maximum=65_536,
    ),
    Knob(
        "notes.folder",
        str,
        "",
        "A folder of your markdown notes to keep as memories (each file one human memory, "
        "updated when the file changes, archived when it is deleted); empty turns it off.",
    ),
    Knob(
        "notes.kind",
        str,
        "fact",
        "Kind of a note's memory when its front matter names none.",  # one Cairn takes: `_across`
    ),
    Knob(
        "notes.scope",
        str,
        "user",
        "Scope of a note's memory when its front matter names none (global or user).",
        choices=("global", "user"),
    ),
    Knob(
        "usage.flush_interval_ms",
        int,
        2000,
        "How often recall counts and last-recalled times are written, in one batch, off the "
        "request path.",
        minimum=50,
        maximum=600_000,
    ),
    Knob(
        "idempotency.retention_hours",
        float,
        168.0,
        "How long a write's idempotency key is remembered, so a retry returns the first result.",
        minimum=1,
        maximum=24 * 365,
    ),
)

KNOB_BY_NAME: dict[str, Knob] = {k.name: k for k in KNOBS}


def documented_names(markdown: str) -> set[str]:
    """The setting names a markdown document mentions in backticks (used by the docs test)."""
    return {k.name for k in KNOBS if f"`{k.name}`" in markdown}


def render_reference(knobs: Iterable[Knob] = KNOBS) -> str:
    """A markdown table of every setting, for `docs/settings.md`."""
    lines = ["| setting | type | default | meaning |", "|---|---|---|---|"]
    for k in knobs:
        kind = {bool: "bool", int: "integer", float: "number", str: "string", tuple: "list"}[k.kind]
        if k.choices:
            kind += " (" + " / ".join(k.choices) + ")"
        default = k.default
        if isinstance(default, bool):
            shown = "true" if default else "false"
        elif isinstance(default, tuple):
            shown = "[" + ", ".join(f'"{x}"' for x in default) + "]"
        elif isinstance(default, str):
            shown = f'"{default}"'
        else:
            shown = shown_number(float(default)) if isinstance(default, float) else str(default)
        lines.append(f"| `{k.name}` | {kind} | `{shown}` | {k.help} |")
    return "\n".join(lines) + "\n"
