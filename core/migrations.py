"""The schema's history: each migration in order, frozen as written, and the runner.

The version lives in `PRAGMA user_version` as `major * 1000 + minor`. A minor step only adds what
older code of the same major can ignore safely; anything else is a new major, and a database from a
newer major is refused. Every migration runs in its own transaction together with the version bump.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from core.clock import Clock, SystemClock
from core.errors import SchemaTooNew, StoreUnavailable


@dataclass(frozen=True, order=True)
class SchemaVersion:
    major: int
    minor: int

    @property
    def encoded(self) -> int:
        return self.major * 1000 + self.minor

    @staticmethod
    def decode(value: int) -> SchemaVersion:
        return SchemaVersion(value // 1000, value % 1000)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


@dataclass(frozen=True)
class Migration:
    version: SchemaVersion
    summary: str
    apply: Callable[[sqlite3.Connection, int], None]  # with the time (ms) to stamp events with


def _statements(*sql: str) -> Callable[[sqlite3.Connection, int], None]:
    def run(conn: sqlite3.Connection, now: int) -> None:
        for statement in sql:
            conn.execute(statement)

    return run


_V1_0 = _statements(
    """CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    )""",
    """CREATE TABLE workspace (
        id TEXT PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL
    )""",
    """CREATE TABLE memory (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL UNIQUE,
        revision INTEGER NOT NULL CHECK (revision >= 1),
        content TEXT NOT NULL,
        summary TEXT,
        kind TEXT NOT NULL,
        scope TEXT NOT NULL CHECK (scope IN ('global', 'user', 'project', 'session')),
        workspace_id TEXT REFERENCES workspace(id),
        session_id TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        keywords TEXT,
        importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 5),
        pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
        status TEXT NOT NULL
            CHECK (status IN ('active', 'superseded', 'archived', 'forgotten')),
        tier TEXT NOT NULL CHECK (tier IN ('human', 'explicit', 'derived', 'llm')),
        agent TEXT,
        source TEXT,
        origin TEXT CHECK (origin IS NULL OR origin IN ('explicit', 'extracted')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        expires_at INTEGER,
        dedupe_key TEXT,
        content_hash TEXT,
        superseded_by TEXT,
        flags TEXT NOT NULL DEFAULT '[]',
        CHECK (scope != 'project' OR workspace_id IS NOT NULL),
        CHECK (scope != 'session' OR session_id IS NOT NULL)
    )""",
    "CREATE INDEX memory_workspace ON memory(workspace_id, seq)",
    "CREATE INDEX memory_session ON memory(session_id) WHERE session_id IS NOT NULL",
    "CREATE INDEX memory_content_hash ON memory(content_hash)",
    "CREATE INDEX memory_expires ON memory(expires_at) WHERE expires_at IS NOT NULL",
    """CREATE UNIQUE INDEX memory_dedupe ON memory(
        scope, coalesce(workspace_id, ''), coalesce(session_id, ''), dedupe_key
    ) WHERE dedupe_key IS NOT NULL""",
    """CREATE TABLE revision (
        memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        content TEXT NOT NULL,
        summary TEXT,
        kind TEXT NOT NULL,
        scope TEXT NOT NULL,
        workspace_id TEXT,
        session_id TEXT,
        tags TEXT NOT NULL,
        keywords TEXT,
        importance INTEGER NOT NULL,
        pinned INTEGER NOT NULL,
        status TEXT NOT NULL,
        tier TEXT NOT NULL,
        expires_at INTEGER,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        reason TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (memory_id, revision)
    ) WITHOUT ROWID""",
    """CREATE TABLE usage (
        memory_id TEXT PRIMARY KEY REFERENCES memory(id) ON DELETE CASCADE,
        use_count INTEGER NOT NULL DEFAULT 0,
        last_recalled_at INTEGER
    )""",
    """CREATE TABLE audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        actor_kind TEXT NOT NULL,
        actor TEXT NOT NULL,
        verified INTEGER NOT NULL DEFAULT 0,
        action TEXT NOT NULL,
        memory_id TEXT,
        revision INTEGER,
        preview TEXT,
        detail TEXT NOT NULL DEFAULT '{}'
    )""",
    "CREATE INDEX audit_memory ON audit(memory_id)",
    """CREATE TABLE tombstone (
        memory_id TEXT PRIMARY KEY,
        content_hash TEXT NOT NULL,
        scope TEXT NOT NULL,
        workspace_id TEXT,
        session_id TEXT,
        forgotten_by TEXT NOT NULL,
        forgotten_at INTEGER NOT NULL,
        reason TEXT
    )""",
    "CREATE INDEX tombstone_hash ON tombstone(content_hash)",
    """CREATE TABLE relation (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('supersedes', 'contradicts')),
        from_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        to_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        open INTEGER NOT NULL,
        note TEXT,
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        resolved_at INTEGER,
        resolved_by TEXT,
        resolution TEXT,
        UNIQUE (kind, from_id, to_id)
    )""",
    "CREATE INDEX relation_to ON relation(to_id)",
    """CREATE TABLE idempotency (
        actor TEXT NOT NULL,
        key TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        response TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (actor, key)
    ) WITHOUT ROWID""",
    "INSERT INTO meta(key, value) VALUES ('memory_seq', '0')",
)


def _v1_1(conn: sqlite3.Connection, now: int) -> None:
    # The full-text index. Imported here so the schema history stays readable top to bottom.
    from core.search_index import rebuild

    rebuild(conn)


_V1_2 = _statements(
    """CREATE TABLE agent (
        name TEXT PRIMARY KEY,
        token_hash TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'revoked')),
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        token_created_at INTEGER,
        last_seen_at INTEGER
    )""",
    """CREATE TABLE feedback (
        id INTEGER PRIMARY KEY,
        memory_id TEXT NOT NULL REFERENCES memory(id) ON DELETE CASCADE,
        revision INTEGER NOT NULL,
        agent TEXT NOT NULL,
        verified INTEGER NOT NULL,
        verdict TEXT NOT NULL CHECK (verdict IN ('useful', 'wrong', 'stale')),
        note TEXT,
        created_at INTEGER NOT NULL
    )""",
    "CREATE INDEX feedback_memory ON feedback(memory_id)",
)

_V1_3 = _statements(
    """CREATE TABLE suggestion (
        id TEXT PRIMARY KEY,
        op TEXT NOT NULL
            CHECK (op IN ('add', 'update', 'supersede', 'forget', 'feedback', 'identity')),
        target_id TEXT,
        base_revision INTEGER,
        replacement_id TEXT,
        content TEXT,
        summary TEXT,
        kind TEXT,
        scope TEXT,
        workspace_id TEXT,
        session_id TEXT,
        tags TEXT NOT NULL DEFAULT '[]',
        keywords TEXT,
        importance INTEGER,
        ttl_seconds INTEGER,
        source TEXT,
        origin TEXT,
        dedupe_key TEXT,
        agent TEXT NOT NULL,
        verified INTEGER NOT NULL,
        reasons TEXT NOT NULL DEFAULT '[]',
        findings TEXT NOT NULL DEFAULT '[]',
        similar TEXT NOT NULL DEFAULT '[]',
        note TEXT,
        verdict TEXT,
        content_hash TEXT,
        hits INTEGER NOT NULL DEFAULT 1,
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL
    )""",
    "CREATE INDEX suggestion_target ON suggestion(target_id) WHERE target_id IS NOT NULL",
    "CREATE INDEX suggestion_rank ON suggestion(hits DESC, last_seen DESC)",
    """CREATE TABLE review_decision (
        id INTEGER PRIMARY KEY,
        suggestion_id TEXT NOT NULL,
        op TEXT NOT NULL,
        target_id TEXT,
        content_hash TEXT,
        scope TEXT,
        workspace_id TEXT,
        agent TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('adopted', 'rejected', 'evicted')),
        reason TEXT,
        decided_by TEXT NOT NULL,
        decided_at INTEGER NOT NULL,
        memory_id TEXT,
        edited TEXT
    )""",
    "CREATE INDEX review_decision_hash ON review_decision(content_hash)",
    """CREATE TABLE scan_allow (
        fingerprint TEXT PRIMARY KEY,
        rule TEXT NOT NULL,
        note TEXT,
        allowed_by TEXT NOT NULL,
        allowed_at INTEGER NOT NULL
    )""",
    """CREATE TABLE counter (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    )""",
)

_V1_4 = _statements(
    """CREATE TABLE identity_version (
        doc TEXT NOT NULL,
        version INTEGER NOT NULL CHECK (version >= 1),
        content TEXT NOT NULL,
        author_kind TEXT NOT NULL
            CHECK (author_kind IN ('human', 'agent', 'system', 'import')),
        author TEXT NOT NULL,
        reason TEXT,
        parent INTEGER,
        created_at INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        PRIMARY KEY (doc, version)
    ) WITHOUT ROWID""",
    """CREATE TABLE session (
        id TEXT PRIMARY KEY,
        workspace_id TEXT,
        first_seen INTEGER NOT NULL,
        last_seen INTEGER NOT NULL
    )""",
    """CREATE TABLE notes_file (
        path TEXT PRIMARY KEY,
        memory_id TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        error TEXT
    )""",
    "CREATE INDEX notes_file_memory ON notes_file(memory_id)",
)


def _v2_0(conn: sqlite3.Connection, now: int) -> None:
    # A major step: a Cairn of schema 1.x would write index rows without counting their terms,
    # so it must not open this database.
    from core.search_index import CREATE_TERM_DOCS, recount

    conn.execute(CREATE_TERM_DOCS)
    recount(conn)


def _v2_1(conn: sqlite3.Connection, now: int) -> None:
    # A minor step: only values change. Names that ended in a line break ($ matched before it
    # until 2026-11-30) get the names a Cairn of today can name; see core/old_names.py.
    from core.old_names import rename_in_store

    rename_in_store(conn, now)


def _v2_2(conn: sqlite3.Connection, now: int) -> None:
    # A minor step: two columns older code ignores (it then adopts a proposal without them, as it
    # always did). A proposal keeps the pin it sets and whether it clears the expiry; a change's
    # `ttl_seconds` is only one the agent gave. Until now a change held its target's expiry as
    # its own: those copies (within the second it was rounded up by) are dropped, so a proposal
    # waiting across the upgrade follows its memory's expiry as a new one does.
    conn.execute(
        "ALTER TABLE suggestion ADD COLUMN pinned INTEGER "
        "CHECK (pinned IS NULL OR pinned IN (0, 1))"
    )
    conn.execute(
        "ALTER TABLE suggestion ADD COLUMN clear_expiry INTEGER NOT NULL DEFAULT 0 "
        "CHECK (clear_expiry IN (0, 1))"
    )
    conn.execute(
        "UPDATE suggestion SET ttl_seconds = NULL WHERE op = 'update' AND ttl_seconds IS NOT NULL "
        "AND EXISTS (SELECT 1 FROM revision r WHERE r.memory_id = suggestion.target_id "
        "AND r.revision = suggestion.base_revision AND r.expires_at IS NOT NULL "
        "AND suggestion.first_seen + suggestion.ttl_seconds * 1000 - r.expires_at "
        "BETWEEN 0 AND 999)"
    )


def _v2_3(conn: sqlite3.Connection, now: int) -> None:
    # A minor step: values change and an index comes, which older code keeps up. Dedupe and
    # idempotency keys holding a carriage return or NEL (kept as sent until 2026-11-30, read as
    # line feeds since) are stored as they are read now, so the same key sent again finds them;
    # see core/old_keys.py.
    from core.old_keys import repair_keys

    repair_keys(conn, now)
    # The notes folder looks up the memory a note's path names by its source (`notes:<path>`);
    # only notes' sources are indexed, and a query uses the index when it spells its condition.
    conn.execute(
        "CREATE INDEX memory_notes ON memory(source) WHERE substr(source, 1, 6) = 'notes:'"
    )


def _v2_4(conn: sqlite3.Connection, now: int) -> None:
    # A minor step: triggers, which older code keeps up. An older Cairn of this major may open a
    # store of a later minor and write the names and keys 2.1 and 2.3 repaired; the triggers mark
    # such a write as it happens, and opening repairs them (core/old_writes.py). What an older
    # Cairn wrote before this step is repaired here.
    from core.old_writes import repair_in, trigger_statements

    for statement in trigger_statements():
        conn.execute(statement)
    repair_in(conn, now)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(SchemaVersion(1, 0), "memories, revisions, audit, tombstones, relations", _V1_0),
    Migration(SchemaVersion(1, 1), "full-text index (FTS5) of every memory", _v1_1),
    Migration(SchemaVersion(1, 2), "agent identities and agents' feedback on memories", _V1_2),
    Migration(
        SchemaVersion(1, 3), "review queue, review decisions, scanner allowlist, counters", _V1_3
    ),
    Migration(
        SchemaVersion(1, 4), "identity document versions, sessions, the notes folder's files", _V1_4
    ),
    Migration(SchemaVersion(2, 0), "document counts per indexed term", _v2_0),
    Migration(
        SchemaVersion(2, 1), "names that ended in a line break renamed (agents, kinds)", _v2_1
    ),
    Migration(SchemaVersion(2, 2), "proposals keep the pin and the cleared expiry they set", _v2_2),
    Migration(
        SchemaVersion(2, 3),
        "dedupe and idempotency keys with old line breaks as read now; notes' sources indexed",
        _v2_3,
    ),
    Migration(
        SchemaVersion(2, 4),
        "an older Cairn's old names and keys marked as written, and repaired at open",
        _v2_4,
    ),
)

CURRENT = MIGRATIONS[-1].version

# The tables every Cairn store has held since schema 1.0; later minors only add tables.
STORE_TABLES = frozenset(
    {
        "meta",
        "workspace",
        "memory",
        "revision",
        "usage",
        "audit",
        "tombstone",
        "relation",
        "idempotency",
    }
)


def read_version(conn: sqlite3.Connection) -> SchemaVersion:
    return SchemaVersion.decode(int(conn.execute("PRAGMA user_version").fetchone()[0]))


def foreign(conn: sqlite3.Connection) -> str | None:
    """Why the database on `conn` is not a Cairn store, as a clause naming what it holds; None
    when it is one, holds nothing yet (a new store), or belongs to a newer major version (which
    `refuse_newer_major` refuses as too new). Reads only.

    A Cairn store has a schema version some Cairn wrote - one in `MIGRATIONS`, or a later minor
    of this major - and the tables of schema 1.0. Version 1.0 sets the version in the same
    transaction as it creates the tables, so tables under version 0 are another program's. A
    newer major may change tables, but every major keeps schema 1.0's: a file without them is
    another program's, however high its version (until 2026-11-30 any version of a newer major
    was taken for a newer Cairn's store).
    """
    value = int(conn.execute("PRAGMA user_version").fetchone()[0])
    version = SchemaVersion.decode(value)
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name"
        )
    ]
    held = f"the table{'s' if len(tables) > 1 else ''} {_names(tables)}" if tables else "no tables"
    missing = sorted(STORE_TABLES - set(tables))
    if version.major > CURRENT.major:
        if not missing:
            return None
        return (
            f"its user_version {value} is no schema version Cairn writes; it holds {held}, not "
            f"Cairn's {_names(missing)}"
        )
    if value == 0:
        return f"it holds {held} and no Cairn schema version" if tables else None
    if version not in {m.version for m in MIGRATIONS} and not version > CURRENT:
        return f"its user_version {value} is no schema version Cairn writes; it holds {held}"
    if missing:
        return f"it holds {held} but not Cairn's {_names(missing)}"
    return None


def refuse_newer_major(
    version: SchemaVersion,
    *,
    written: str = "this memory database",
    then: str = ". Upgrade Cairn, or restore a backup made by this version",
) -> None:
    """Raise SchemaTooNew when `version` belongs to a newer major than this Cairn's (a newer
    minor of this major is fine: it only adds what this code can ignore).

    Args:
        written: what was written, the message's subject (a backup names itself).
        then: the end of the message, after the versions: what to do.

    Raises:
        SchemaTooNew: naming the version found and the major this Cairn understands.
    """
    if version.major > CURRENT.major:
        raise SchemaTooNew(
            f"{written} was written by a newer Cairn (schema {version}; this Cairn understands "
            f"{CURRENT.major}.x){then}",
            data={"found": str(version), "supported_major": CURRENT.major},
        )


def _names(names: list[str]) -> str:
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return ", ".join(names[:5]) + more


def migrate(
    conn: sqlite3.Connection,
    *,
    target: SchemaVersion = CURRENT,
    before_migrate: Callable[[int, int], None] | None = None,
    clock: Clock | None = None,
) -> SchemaVersion:
    """Bring the database up to `target`, one migration per transaction; what a migration
    records in the audit log is stamped with `clock` (the system's by default).

    Args:
        conn: an autocommit connection (isolation_level None) with nothing else in flight.
        target: the version to stop at (tests start from older versions).
        before_migrate: called once with (from, to) encoded versions before an existing,
            non-empty database is changed - the composition root takes a backup there.

    Raises:
        SchemaTooNew: the database belongs to a newer major version of Cairn.
        StoreUnavailable: the database is not a Cairn store (`foreign`); it is not changed.
    """
    current = read_version(conn)
    reason = foreign(conn)
    if reason is not None:
        raise StoreUnavailable(
            f"this database is not a Cairn memory database ({reason}); it was not changed",
            data={"user_version": current.encoded},
        )
    refuse_newer_major(current)
    pending = [m for m in MIGRATIONS if current < m.version <= target]
    if not pending:
        return current
    if before_migrate is not None and current.encoded != 0:
        before_migrate(current.encoded, pending[-1].version.encoded)
    now = (clock or SystemClock()).now_ms()
    for step in pending:
        conn.execute("BEGIN IMMEDIATE")
        try:
            step.apply(conn, now)
            conn.execute(f"PRAGMA user_version = {step.version.encoded}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return read_version(conn)


def missing_schema(conn: sqlite3.Connection) -> list[str]:
    """What the Cairn store on `conn` lacks of the schema its version has: each missing table by
    name, then each missing column of a table it has as `table.column`, in schema order; empty
    when it holds all of it. A later minor of this major is held to this Cairn's schema, which
    it extends. Reads only.

    The schema is not listed by hand: it is what the migrations up to that version create, run
    on an empty database in memory.
    """
    version = min(read_version(conn), CURRENT)
    present = {table: set(_columns(conn, table)) for table in _tables(conn)}
    missing: list[str] = []
    columns: list[str] = []
    for table, needed in _schema_at(version):
        if table not in present:
            missing.append(table)
            continue
        columns.extend(f"{table}.{c}" for c in needed if c not in present[table])
    return missing + columns


@cache
def _schema_at(version: SchemaVersion) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each table (with its columns) of a store created by the migrations up to `version`."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(conn, target=version)
        return tuple((t, tuple(_columns(conn, t))) for t in _tables(conn))
    finally:
        conn.close()


def _tables(conn: sqlite3.Connection) -> list[str]:
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY rowid"
        )
    ]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    quoted = table.replace('"', '""')
    return [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{quoted}")')]


def lacking(missing: list[str]) -> str:
    """`missing_schema`'s names as a clause: "the table a and the columns b.x, b.y"."""
    tables = [m for m in missing if "." not in m]
    columns = [m for m in missing if "." in m]
    parts = [
        f"the {noun}{'s' if len(names) > 1 else ''} {_names(names)}"
        for noun, names in (("table", tables), ("column", columns))
        if names
    ]
    return " and ".join(parts)
