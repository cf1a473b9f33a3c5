"""What an older Cairn of this major writes on a newer store, noticed as it is written (schema
2.4's triggers) and repaired when this Cairn opens the store.

A minor step leaves the store open to older code of the same major, and a Cairn of schema 2.0-2.2
writes the shapes schemas 2.1 and 2.3 repaired once, as migrations: a name ending in a line break
(`helper\\n`: an agent, a `soul:` document, a kind, a policy's agent) and a dedupe or idempotency
key holding a carriage return or NEL (`editor\\r`). Reading every table at each open to find them
would cost as much as the migrations did, so SQLite marks them instead: a trigger on each table
holding such a column sets one row of `meta` (`old_writes`) when a row is written with one,
whatever code writes it - older code keeps up triggers it has never heard of. Opening looks up
that one row; when it is there, the migrations' own repairs run again, in one transaction, before
anything is served, and the mark goes with them.

A trigger sees the write itself, not what the store holds: a memory that keeps its old key beside
the one holding the key as it reads now (`old_keys`) is written once and marks nothing later,
where a check of the stored keys would find it at every open.
"""

from __future__ import annotations

import logging
import sqlite3

log = logging.getLogger(__name__)

FLAG_KEY = "old_writes"  # meta: the first table an older Cairn wrote an old shape into
FLAGGED = "SELECT value FROM meta WHERE key = 'old_writes'"

# The columns schema 2.4 watches, as written then (a later change of `old_names.AGENT_COLUMNS`
# or of these needs a migration of its own; a test holds them together): where a name may end in
# a line break, and where a key may hold a carriage return or NEL.
NAME_COLUMNS: tuple[tuple[str, str], ...] = (
    ("agent", "name"),
    ("memory", "agent"),
    ("memory", "kind"),
    ("revision", "actor"),
    ("revision", "kind"),
    ("feedback", "agent"),
    ("suggestion", "agent"),
    ("suggestion", "kind"),
    ("review_decision", "agent"),
    ("review_decision", "decided_by"),
    ("relation", "created_by"),
    ("relation", "resolved_by"),
    ("tombstone", "forgotten_by"),
    ("identity_version", "author"),
    ("identity_version", "doc"),
    ("idempotency", "actor"),
    ("scan_allow", "allowed_by"),
)
KEY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("memory", "dedupe_key"),
    ("suggestion", "dedupe_key"),
    ("idempotency", "key"),
)


def _name(value: str) -> str:
    # a name's pattern ended in `$` until 2026-11-30, which let a line break through at its end
    return f"substr({value}, -1) IN (char(10), char(13))"


def _key(value: str) -> str:
    # a carriage return is char(13), NEL (U+0085) char(133)
    return f"(instr({value}, char(13)) > 0 OR instr({value}, char(133)) > 0)"


def _policy(value: str) -> str:
    # the capture policy's copy, as JSON: an agent or kind named with a line break at its end
    return f"(NEW.key = 'policy' AND (instr({value}, '\\n\"') > 0 OR instr({value}, '\\r\"') > 0))"


def trigger_statements() -> list[str]:
    """The CREATE TRIGGER statements of schema 2.4: for each watched table, one after an insert
    and one after an update of a watched column that changes it to an old shape. Each sets the
    mark unless it is set - an INSERT that cannot conflict, so no conflict clause of the
    statement that fired it (`INSERT OR ABORT`, `OR REPLACE`) can turn it into a failure."""
    checks: dict[str, list[tuple[str, str]]] = {}
    for table, column in NAME_COLUMNS:
        checks.setdefault(table, []).append((column, _name(f"NEW.{column}")))
    for table, column in KEY_COLUMNS:
        checks.setdefault(table, []).append((column, _key(f"NEW.{column}")))
    checks["meta"] = [("value", _policy("NEW.value"))]
    statements = []
    for table, watched in checks.items():
        mark = (
            f"INSERT INTO meta (key, value) SELECT '{FLAG_KEY}', '{table}' "  # noqa: S608 - fixed names
            f"WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = '{FLAG_KEY}')"
        )
        on_insert = " OR ".join(check for _, check in watched)
        on_update = " OR ".join(f"({check} AND NEW.{c} IS NOT OLD.{c})" for c, check in watched)
        columns = ", ".join(c for c, _ in watched)
        statements.append(
            f"CREATE TRIGGER old_writes_{table}_insert AFTER INSERT ON {table} "
            f"WHEN {on_insert} BEGIN {mark}; END"
        )
        statements.append(
            f"CREATE TRIGGER old_writes_{table}_update AFTER UPDATE OF {columns} ON {table} "
            f"WHEN {on_update} BEGIN {mark}; END"
        )
    return statements


def repair_in(conn: sqlite3.Connection, now: int) -> None:
    """Inside a write transaction: repair every old shape the store holds, with the migrations'
    own repairs and rules (renames by `old_names`, keys by `old_keys`: audited - stamped `now`,
    Cairn's clock in ms - and logged), and clear the mark."""
    from core.old_keys import repair_keys
    from core.old_names import rename_in_store

    rename_in_store(conn, now)
    repair_keys(conn, now)
    conn.execute("DELETE FROM meta WHERE key = ?", (FLAG_KEY,))


def repair_if_marked(conn: sqlite3.Connection, now: int) -> bool:
    """At open, on an autocommit connection with nothing in flight, after the migrations: when an
    older Cairn wrote an old shape since the last open, repair the store in one transaction.
    Returns whether it did; on nearly every store it reads one row of `meta` and returns."""
    row = conn.execute(FLAGGED).fetchone()
    if row is None:
        return False
    log.warning(
        "an older Cairn wrote names or keys in shapes this Cairn repairs (first in the table "
        "%s); repairing them as the schema 2.1 and 2.3 migrations did",
        row[0],
    )
    conn.execute("BEGIN IMMEDIATE")
    try:
        repair_in(conn, now)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return True
