"""Opening a store: the time `Store.open` (lock, checks, migrations, the repair of an older Cairn's
writes, the writer) and `Cairn.open` (every service) take on a store of N memories, median of
runs; the migration that brings it up to this Cairn's schema, when it is older; the open that
repairs one key an older Cairn wrote; and acknowledged writes per second on it.

    .venv/bin/python scripts/bench_open.py [--memories 100000] [--runs 15] [--writes 1000]
        [--store FILE] [--save FILE]

`--store FILE` starts from a copy of FILE (a store an older Cairn made: the migration is timed on
it) instead of building one with this code; `--save FILE` keeps a copy of the one built. The
figures of 2026-12-01 are in docs/data-model.md (schema 2.4).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from benchlib import sentence

from core.app import Cairn
from core.changes import ChangeBus
from core.clock import SystemClock
from core.migrations import CURRENT, read_version
from core.model import BUILTIN_KINDS, Caller, Scope, Surface
from core.paths import Paths, resolve_paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.requests import WriteRequest
from core.settings import Settings
from core.store import Store


def build(paths: Paths, n: int) -> None:
    rng = random.Random(7)
    app = Cairn.open(paths)
    try:
        for start in range(0, n, 5000):
            reqs = [
                WriteRequest(content=sentence(rng), kind="fact", scope=Scope.USER)
                for _ in range(min(5000, n - start))
            ]
            failed = [
                r for r in app.memories.write_many(Caller.human(), reqs) if isinstance(r, Exception)
            ]
            assert not failed
    finally:
        app.close()


def store_open(paths: Paths) -> float:
    t0 = time.perf_counter()
    store = Store.open(
        paths.database, Settings.defaults(), ChangeBus(), SystemClock(), lock_path=paths.store_lock
    )
    took = time.perf_counter() - t0
    store.close()
    return took


def cairn_open(paths: Paths) -> float:
    t0 = time.perf_counter()
    app = Cairn.open(paths)
    took = time.perf_counter() - t0
    app.close()
    return took


def median_ms(fn: object, paths: Paths, runs: int) -> str:
    samples = [fn(paths) * 1000 for _ in range(runs)]  # type: ignore[operator]
    return f"median {statistics.median(samples):7.2f} ms  (min {min(samples):.2f}, n={runs})"


def writes_per_second(paths: Paths, n: int) -> float:
    write_policy(paths.config / POLICY_FILE, all_auto(BUILTIN_KINDS))  # every write lands
    app = Cairn.open(paths)
    agent = Caller(Surface.AGENT, agent="bench", verified=True)
    rng = random.Random(11)
    try:
        texts = [sentence(rng) for _ in range(n)]
        t0 = time.perf_counter()
        for text in texts:
            app.memories.write(agent, WriteRequest(content=text, kind="fact", scope=Scope.USER))
        return n / (time.perf_counter() - t0)
    finally:
        app.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--store", type=Path, help="start from a copy of this store")
    parser.add_argument("--save", type=Path, help="keep a copy of the store built here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bo") as tmp:
        paths = resolve_paths({"CAIRN_HOME": str(Path(tmp) / "h")})
        if args.store:
            paths.data.mkdir(parents=True, mode=0o700)
            shutil.copyfile(args.store, paths.database)
            conn = sqlite3.connect(paths.database)
            print(f"store {args.store}: schema {read_version(conn)}")
            conn.close()
            took = store_open(paths)
            print(f"first open (migrating to {CURRENT}): {took * 1000:.0f} ms")
        else:
            t0 = time.perf_counter()
            build(paths, args.memories)
            print(f"built {args.memories} memories in {time.perf_counter() - t0:.1f} s")
            if args.save:
                conn = sqlite3.connect(paths.database)
                conn.execute("VACUUM INTO ?", (str(args.save),))
                conn.close()
        print(f"Store.open  {median_ms(store_open, paths, args.runs)}")
        print(f"Cairn.open  {median_ms(cairn_open, paths, max(3, args.runs // 3))}")
        conn = sqlite3.connect(paths.database, isolation_level=None)
        (mid,) = conn.execute("SELECT id FROM memory ORDER BY seq DESC LIMIT 1").fetchone()
        conn.execute("UPDATE memory SET dedupe_key = 'editor' || char(13) WHERE id = ?", (mid,))
        conn.close()
        print(f"open after an older Cairn's write of one key: {store_open(paths) * 1000:.0f} ms")
        print(f"writes: {writes_per_second(paths, args.writes):.0f}/s ({args.writes} agent writes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
