"""The help texts of the settings core declares (`core.knobs.KNOBS`), in the person's
language. Core never imports Qt, so its English texts are listed here for `scripts/translations`
to find (context `Knob`); a window shows one with `knob_help`. A test fails when this list and
core's differ, or when a text has no Chinese translation.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from core.knobs import KNOB_BY_NAME
from desktop.i18n import QT_TRANSLATE_NOOP

CONTEXT = "Knob"

# Every knob's help, as core words it. A knob added or reworded in core needs its line here.
HELP: dict[str, str] = {
    "store.synchronous": QT_TRANSLATE_NOOP(
        "Knob",
        "SQLite durability. NORMAL (with WAL) survives a killed or crashed Cairn without "
        "losing an acknowledged write; an OS crash or power loss may roll back the last "
        "commits. FULL also survives power loss and is several times slower on writes.",
    ),
    "store.busy_timeout_ms": QT_TRANSLATE_NOOP(
        "Knob", "How long a database connection waits for a lock before reporting the store busy."
    ),
    "store.quick_check_on_open": QT_TRANSLATE_NOOP(
        "Knob",
        "Run SQLite's quick_check when the store opens, and refuse to start on a damaged file.",
    ),
    "limits.max_content_bytes": QT_TRANSLATE_NOOP(
        "Knob",
        "Largest memory content accepted, in UTF-8 bytes. Larger writes are refused, never cut.",
    ),
    "limits.max_summary_bytes": QT_TRANSLATE_NOOP(
        "Knob", "Largest summary accepted, in UTF-8 bytes."
    ),
    "limits.max_keywords_bytes": QT_TRANSLATE_NOOP(
        "Knob", "Largest `keywords` enrichment text accepted, in UTF-8 bytes."
    ),
    "limits.max_tags": QT_TRANSLATE_NOOP("Knob", "Most tags one memory may carry."),
    "limits.max_tag_chars": QT_TRANSLATE_NOOP("Knob", "Longest tag accepted, in characters."),
    "limits.max_source_chars": QT_TRANSLATE_NOOP(
        "Knob", "Longest free-form provenance `source` string accepted, in characters."
    ),
    "memory.extra_kinds": QT_TRANSLATE_NOOP(
        "Knob",
        "Kinds of memory to accept beyond the built-in ones (fact, preference, "
        "convention, procedure, pitfall, correction, insight, idea). Lowercase words.",
    ),
    "search.agents_may_broaden": QT_TRANSLATE_NOOP(
        "Knob",
        "Let agent connections search every workspace when they ask explicitly (horizon "
        "'all'). Off: an agent only ever sees its own workspace, user and global "
        "memories.",
    ),
    "context.max_bytes": QT_TRANSLATE_NOOP(
        "Knob", "Default byte budget of a context bundle when the caller gives none."
    ),
    "context.tiers": QT_TRANSLATE_NOOP(
        "Knob", "Author tiers a context bundle takes by default (human, explicit, derived, llm)."
    ),
    "server.max_frame_bytes": QT_TRANSLATE_NOOP(
        "Knob",
        "Largest request frame (one line of JSON) accepted, in bytes; a larger one is "
        "answered with an error and the connection closed.",
    ),
    "server.frame_timeout_s": QT_TRANSLATE_NOOP(
        "Knob",
        "Seconds a client has to finish a frame it started, and to take any of its "
        "answers once its socket is full; a slower one is disconnected.",
    ),
    "server.idle_timeout_s": QT_TRANSLATE_NOOP(
        "Knob", "Seconds a connection may stay silent before it is closed."
    ),
    "server.hello_timeout_s": QT_TRANSLATE_NOOP(
        "Knob", "Seconds a new connection has to send its hello (with its token on TCP)."
    ),
    "server.max_connections": QT_TRANSLATE_NOOP(
        "Knob", "Most connections served at once; more are refused with an error."
    ),
    "server.max_tcp_unauthenticated": QT_TRANSLATE_NOOP(
        "Knob",
        "Most loopback TCP connections waiting for their hello at once; more are refused. They "
        "do not count against server.max_connections, so they never take the Unix socket's.",
    ),
    "server.max_in_flight": QT_TRANSLATE_NOOP(
        "Knob", "Most requests one connection may have in flight; more are refused (rate_limited)."
    ),
    "server.max_push_backlog_bytes": QT_TRANSLATE_NOOP(
        "Knob",
        "Most bytes of pushed `changes` a subscriber may leave unread; past it the "
        "connection is unsubscribed and told where to catch up from with changes.since.",
    ),
    "server.workers": QT_TRANSLATE_NOOP(
        "Knob", "Threads that run service calls for the socket server."
    ),
    "server.search_workers": QT_TRANSLATE_NOOP(
        "Knob",
        "Threads that run searches and context bundles. Search scoring is CPU-bound "
        "Python, so on CPython extra threads mostly contend for the interpreter lock: on "
        "2 CPUs, 8 threads served fewer searches per second than 1 (see "
        "docs/performance.md).",
    ),
    "server.tcp_port": QT_TRANSLATE_NOOP(
        "Knob",
        "Also listen on loopback TCP (127.0.0.1 and ::1) at this port, with tokens "
        "required; 0 is off. Never binds another address.",
    ),
    "security.require_tokens": QT_TRANSLATE_NOOP(
        "Knob",
        "Refuse agent connections on the Unix socket that present no token. TCP always "
        "requires one.",
    ),
    "security.confirm_terminals_in_tray": QT_TRANSLATE_NOOP(
        "Knob",
        "While the tray runs, ask in the tray about every person's command, also those "
        "typed at a terminal (a program that fakes a terminal then still needs your "
        "click).",
    ),
    "review.max_items": QT_TRANSLATE_NOOP(
        "Knob",
        "Proposals the review queue holds. Beyond this the least-seen, longest-unseen go; "
        "each eviction is recorded and counted in health, never silent.",
    ),
    "audit.max_events": QT_TRANSLATE_NOOP(
        "Knob",
        "Audit events kept in the database. Past this, the oldest are rotated into JSON-lines "
        "files under the state directory (the export format) until 90% remain, so a store "
        "nobody writes to makes no new files - never dropped.",
    ),
    "lifecycle.expired_retention_days": QT_TRANSLATE_NOOP(
        "Knob", "Days an expired memory is kept (hidden, shown on request) before it is purged."
    ),
    "lifecycle.archive_unused_days": QT_TRANSLATE_NOOP(
        "Knob",
        "Days a project memory may go unused (not recalled, not changed) before the "
        "janitor archives it; 0 turns this off. Pinned memories are never archived, and "
        "importance 4 and 5 get twice as long. Archived memories stay searchable on "
        "request; nothing is deleted.",
    ),
    "lifecycle.session_retention_days": QT_TRANSLATE_NOOP(
        "Knob",
        "Days after a session was last seen before its session-scope memories expire "
        "(and, after lifecycle.expired_retention_days, are purged); 0 turns this off.",
    ),
    "backup.interval_hours": QT_TRANSLATE_NOOP(
        "Knob",
        "Hours between automatic online backups while Cairn runs; 0 turns them off. A "
        "backup is also taken before any schema migration.",
    ),
    "backup.keep_daily": QT_TRANSLATE_NOOP("Knob", "Daily backups kept (the newest of each day)."),
    "backup.keep_weekly": QT_TRANSLATE_NOOP(
        "Knob", "Weekly backups kept beyond the daily ones (the newest of each ISO week)."
    ),
    "identity.max_bytes": QT_TRANSLATE_NOOP(
        "Knob",
        "Largest identity document version accepted, in UTF-8 bytes (each document is "
        "injected into agents' prompts, so it stays small).",
    ),
    "notes.folder": QT_TRANSLATE_NOOP(
        "Knob",
        "A folder of your markdown notes to keep as memories (each file one human memory, "
        "updated when the file changes, archived when it is deleted); empty turns it off.",
    ),
    "notes.kind": QT_TRANSLATE_NOOP(
        "Knob", "Kind of a note's memory when its front matter names none."
    ),
    "notes.scope": QT_TRANSLATE_NOOP(
        "Knob", "Scope of a note's memory when its front matter names none (global or user)."
    ),
    "usage.flush_interval_ms": QT_TRANSLATE_NOOP(
        "Knob",
        "How often recall counts and last-recalled times are written, in one batch, off "
        "the request path.",
    ),
    "idempotency.retention_hours": QT_TRANSLATE_NOOP(
        "Knob",
        "How long a write's idempotency key is remembered, so a retry returns the first result.",
    ),
}


def knob_help(name: str) -> str:
    """The help text of setting `name` in the language of the windows (core's own English text
    when it has no translation)."""
    return QCoreApplication.translate(CONTEXT, KNOB_BY_NAME[name].help)
