"""A memory database damaged on disk while Cairn serves it: every read says so in Cairn's words.

Until 2026-12-02 a search, a list, a get, a context bundle or a health snapshot over a damaged file
raised SQLite's own "database disk image is malformed" or "file is not a database": an agent got
`internal_error`, the command line exit 70, the Memories window "Something went wrong inside
Cairn", and nobody was told the file was damaged, nor what to do. Now each is `integrity`
(-32022, exit 74) naming the file and `cairn restore --latest`, and health keeps the first damage
seen as its `integrity` warning.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.app import Cairn
from core.context_bundle import ContextRequest
from core.daemon import Runtime
from core.db_errors import translate_db_error
from core.errors import ErrorCode, IntegrityFailure
from core.model import Caller, ListFilter
from core.requests import WriteRequest
from core.runtime import socket_path
from core.search import SearchRequest
from tests.serving import RawClient, paths_for, served_in_thread
from tests.test_cli_serving import at_terminal, cairn

RESTORE = "`cairn restore --latest`"


def fill(app: Cairn, n: int = 300) -> list[str]:
    """`n` memories (enough for the memory table and its index to span many pages), all of
    them in the database file itself: checkpointed, the write-ahead log emptied."""
    ids = []
    for i in range(n):
        result = app.memories.write(
            Caller.human(),
            WriteRequest.from_params(
                {
                    "content": f"otters hold hands while they sleep, note {i} {'z' * (i % 97)}",
                    "kind": "fact",
                    "scope": "global",
                }
            ),
        )
        assert result.id is not None
        ids.append(result.id)
    app.store.checkpoint()
    assert os.path.getsize(f"{app.store.path}-wal") == 0
    return ids


def _garbage(n: int) -> bytes:
    """Bytes no SQLite page starts with (page type 0) or holds in order."""
    return (bytes([0]) + bytes(range(255, 0, -1))) * (n // 256) + bytes(n % 256)


def garble_middle(db: Path) -> None:
    """Overwrite the pages in the middle of the file - from the memory table on - with garbage."""
    page = _page_size(db)
    size = db.stat().st_size
    start = _root_page(db, "memory") - 1
    with open(db, "r+b") as f:
        f.seek(start * page)
        f.write(_garbage(size - start * page - 2 * page))


def garble_header(db: Path) -> None:
    """Make the file "not a database": an impossible page size and payload fractions in its
    header. The first 16 bytes and the write-ahead-log flags stay, so a serving Cairn does not
    take it for another file copied over its own (`core/replaced_store.overwritten`)."""
    with open(db, "r+b") as f:
        f.seek(16)
        f.write(b"\x00\x03")
        f.seek(21)
        f.write(b"\xff\xff\xff")


def truncate(db: Path) -> None:
    """Cut the file to a third of its length (a copy or a disk that lost its end)."""
    os.truncate(db, db.stat().st_size // 3)


def garble_search_index(db: Path) -> None:
    """Overwrite only the search index's pages: search fails, listing and health do not."""
    page = _page_size(db)
    roots = [_root_page(db, f"memory_fts_{part}") for part in ("data", "idx", "docsize")]
    with open(db, "r+b") as f:
        for root in roots:
            f.seek((root - 1) * page)
            f.write(_garbage(page))


def _page_size(db: Path) -> int:
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True) as conn:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])


def _root_page(db: Path, table: str) -> int:
    conn = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,))
        return int(row.fetchone()[0])
    finally:
        conn.close()


DAMAGES: dict[str, Callable[[Path], None]] = {
    "garbage in the middle": garble_middle,
    "not a database": garble_header,
    "truncated": truncate,
}


def off_thread(fn: Callable[[], object]) -> BaseException | None:
    """Run `fn` on a new thread (a new read connection, as a server's worker may have) and
    return what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as e:
            raised.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(30)
    return raised[0] if raised else None


def assert_says_damaged(error: BaseException | None, db: Path) -> None:
    assert isinstance(error, IntegrityFailure), repr(error)
    assert error.code is ErrorCode.INTEGRITY
    assert f"the memory database {db} is damaged" in error.message, error.message
    assert RESTORE in error.message, error.message
    assert error.data == {"path": str(db)}


# -- the service -------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_every_read_of_a_damaged_store_says_it_is_damaged_and_what_to_do(
    cairn: Cairn, human: Caller, damage: Callable[[Path], None]
) -> None:
    ids = fill(cairn)
    db = cairn.store.path
    damage(db)
    reads: dict[str, Callable[[], object]] = {
        "search": lambda: cairn.search.search(human, SearchRequest("otters sleep")),
        "list": lambda: cairn.memories.list(human, ListFilter()),
        "get": lambda: cairn.memories.get(human, ids[150]),
        "context": lambda: cairn.context.build(human, ContextRequest("otters sleep")),
        "health": lambda: cairn.health.snapshot(human),
    }
    for name, read in reads.items():
        for raised in (_raised(read), off_thread(read)):  # this thread's connection, a new one
            assert raised is not None, name
            assert_says_damaged(raised, db)


def _raised(fn: Callable[[], object]) -> BaseException | None:
    try:
        fn()
    except BaseException as e:
        return e
    return None


def test_damage_a_read_met_is_a_health_warning_though_the_caller_said_nothing(
    cairn: Cairn, human: Caller
) -> None:
    fill(cairn, 60)
    db = cairn.store.path
    assert "integrity" not in cairn.health.snapshot(human)["warnings"]
    garble_search_index(db)
    assert_says_damaged(_raised(lambda: cairn.search.search(human, SearchRequest("otters"))), db)
    # What the damage did not touch is still served; health names the damage.
    assert len(cairn.memories.list(human, ListFilter()).items) == 50
    warning = cairn.health.snapshot(human)["warnings"]["integrity"]
    assert f"the memory database {db} is damaged" in warning and RESTORE in warning
    # The first damage seen stays: a second damaged read does not change the words.
    _raised(lambda: cairn.context.build(human, ContextRequest("otters")))
    assert cairn.health.snapshot(human)["warnings"]["integrity"] == warning


def test_a_write_that_meets_damage_is_integrity_naming_the_file(short_tmp: Path) -> None:
    """The writer's translation is the reads': a write that met a damaged file was
    `store_unavailable`, "the memory database is damaged: ...", naming no file and no command."""
    db = short_tmp / "cairn.db"
    db.write_bytes(b"SQLite format 3\x00" + _garbage(8192))
    conn = sqlite3.connect(db)
    try:
        with pytest.raises(sqlite3.DatabaseError) as caught:
            conn.execute("CREATE TABLE t (x)")
    finally:
        conn.close()
    assert_says_damaged(translate_db_error(caught.value, path=db), db)


def test_a_read_that_fails_for_a_bug_is_not_called_damage(cairn: Cairn) -> None:
    """A read connection refusing a write is a bug in the read path, not a read-only file: it
    goes out as SQLite raised it, and no warning is left."""
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        cairn.store.read_db.conn().execute("INSERT INTO meta (key, value) VALUES ('x', 'y')")
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        cairn.store.read_db.conn().execute("SELECT * FROM no_such_table")
    assert cairn.store.damage is None


# -- the socket and the command line -----------------------------------------------------------


@pytest.fixture
def served(short_tmp: Path) -> Iterator[Runtime]:
    with served_in_thread(paths_for(short_tmp / "home"), confirm_human=lambda _s: None) as rt:
        yield rt


@pytest.mark.parametrize("damage", [garble_middle, garble_header], ids=["middle", "header"])
def test_agents_and_the_command_line_are_told_the_store_is_damaged(
    served: Runtime, short_tmp: Path, damage: Callable[[Path], None]
) -> None:
    assert served.cairn is not None
    ids = fill(served.cairn)
    db = served.paths.database
    agent = RawClient(socket_path(served.paths))
    assert "result" in agent.hello()
    damage(db)
    for method, params in (
        ("memory.search", {"query": "otters sleep"}),
        ("memory.list", {}),
        ("memory.get", {"id": ids[150]}),
        ("context.build", {"query": "otters sleep"}),
        ("health.get", {}),
    ):
        reply = agent.request(method, params)
        assert "error" in reply, (method, reply)
        error = reply["error"]
        assert (error["code"], error["data"]["error"]) == (-32022, "integrity"), (method, reply)
        assert f"the memory database {db} is damaged" in error["message"], error["message"]
        assert RESTORE in error["message"], error["message"]
    agent.close()
    for args in (("search", "otters"), ("list",), ("get", ids[150]), ("health",)):
        done = cairn(short_tmp / "home", *args)
        assert done.returncode == 74, (args, done.stdout, done.stderr)
        assert f"the memory database {db} is damaged" in done.stderr, (args, done.stderr)
        assert RESTORE in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_person_sees_the_damage_in_health_after_an_agents_search_met_it(
    served: Runtime, short_tmp: Path
) -> None:
    assert served.cairn is not None
    fill(served.cairn, 60)
    db = served.paths.database
    garble_search_index(db)
    agent = RawClient(socket_path(served.paths))
    assert "result" in agent.hello()
    reply = agent.request("memory.search", {"query": "otters"})
    assert reply["error"]["data"]["error"] == "integrity", reply  # and the agent says nothing
    agent.close()
    status, shown = at_terminal(short_tmp / "home", "health", typed="")
    assert status == 0, shown
    assert "integrity:" in shown and f"the memory database {db} is damaged" in shown, shown
    assert "cairn restore --latest" in shown, shown
