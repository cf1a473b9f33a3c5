"""The janitor's daily integrity check on a big store, seen by an agent's writes: open a copy of
a store, write a memory every 20 ms from one thread (as the socket's handlers do, through the
one writer) and run the check (`Lifecycle.check_integrity`, SQLite's quick_check) on another,
as the housekeeping round does; print how long the check took and how long each write waited
before, during and after it.

    .venv/bin/python scripts/bench_integrity.py STORE [--on-writer]

STORE is a CAIRN_HOME (scripts/bigstore.py builds one); it is copied, never changed (a copy of
an older store migrates and reindexes on its first open). `--on-writer` runs the same
quick_check as a job of the writer instead, for comparison: what writes would wait for if it ran
on the write connection.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from benchlib import copy_store, percentile

from core.app import Cairn
from core.model import Caller, Scope, Surface
from core.requests import WriteRequest
from core.settings import Settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--on-writer", action="store_true", help="run the check on the writer")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="cbi", dir="/tmp")) / "home"
    try:
        began = time.perf_counter()
        paths = copy_store(args.store, home)
        # No check on opening: the janitor's first one is then due at once (`Lifecycle`).
        settings = Settings.defaults().with_values(store__quick_check_on_open=False)
        app = Cairn.open(paths, settings=settings)
        print(f"copied and opened in {time.perf_counter() - began:.1f} s")
        try:
            run(app, on_writer=args.on_writer)
        finally:
            app.close()
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


def run(app: Cairn, *, on_writer: bool) -> None:
    workspace = app.workspaces.resolve(str(app.paths.data)).id
    agent = Caller(Surface.AGENT, agent="bench", verified=True, workspace_id=workspace)
    waits: list[tuple[float, float]] = []  # (when it began, seconds it took)
    stop = threading.Event()

    def write_loop() -> None:
        n = 0
        while not stop.is_set():
            t = time.perf_counter()
            app.memories.write(
                agent,
                WriteRequest(content=f"bench write {n}", kind="fact", scope=Scope.PROJECT),
            )
            waits.append((t, time.perf_counter() - t))
            n += 1
            time.sleep(0.02)

    writer = threading.Thread(target=write_loop)
    writer.start()
    time.sleep(3.0)  # writes before the check
    check_began = time.perf_counter()
    if on_writer:
        rows = app.store.writer.run(
            lambda tx: [r[0] for r in tx.conn.execute("PRAGMA quick_check(5)")],
            transactional=False,
        )
        result = "; ".join(rows)
    else:
        checked = threading.Thread(target=app.lifecycle.check_integrity)
        checked.start()
        checked.join()
        result = app.warnings.snapshot().get("integrity", "ok")
    check_ended = time.perf_counter()
    time.sleep(3.0)  # writes after it
    stop.set()
    writer.join()
    print(
        f"quick_check on the {'writer' if on_writer else 'read connection of its own thread'}: "
        f"{check_ended - check_began:.1f} s, {result}"
    )
    for name, chosen in (
        ("before", [w for t, w in waits if t < check_began]),
        ("during", [w for t, w in waits if check_began <= t < check_ended]),
        ("after", [w for t, w in waits if t >= check_ended]),
    ):
        if chosen:
            ms = [w * 1000 for w in chosen]
            print(
                f"writes {name:6}: {len(ms):4d}, median {statistics.median(ms):7.1f} ms, "
                f"p95 {percentile(ms, 95):7.1f} ms, longest {max(ms):7.1f} ms"
            )


if __name__ == "__main__":
    main()
