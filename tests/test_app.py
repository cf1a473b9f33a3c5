"""Opening a Cairn (the composition root): what a failed start leaves behind."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from core.app import Cairn
from core.errors import AlreadyRunning
from core.paths import Paths
from tests.conftest import open_policy


def test_a_start_that_fails_after_the_store_opened_releases_it(paths: Paths) -> None:
    """A service failing to build after the store opened left the store lock, the writer and the
    usage thread behind: the next open in the same process said the store was "already open in
    another Cairn process" with this process's own pid."""
    open_policy(paths.config)
    Cairn.open(paths).close()
    con = sqlite3.connect(paths.database)  # a damaged store: seeding the identity fails
    con.execute("DROP TABLE identity_version")
    con.commit()
    con.close()
    before = set(threading.enumerate())
    for _ in range(2):
        with pytest.raises(sqlite3.OperationalError, match="identity_version") as info:
            Cairn.open(paths)
        assert not isinstance(info.value, AlreadyRunning)
    assert [t.name for t in set(threading.enumerate()) - before if t.is_alive()] == []
