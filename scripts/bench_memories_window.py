"""How the Memories window behaves on a large store: opens it offscreen over a scratch Cairn of
100k memories and measures the time to the first rows shown, the latency of each further page
(`fetchMore` until the rows are in the table), and of a search typed into the box.

    python scripts/bench_memories_window.py [--memories 100000] [--pages 60]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import percentile, scratch_cairn, sentence
from PySide6.QtCore import QEventLoop, QModelIndex, QTimer
from PySide6.QtWidgets import QApplication

from core.model import Caller, Scope
from core.requests import WriteRequest
from desktop.desk import Desk
from desktop.windows.memories import MemoriesWindow

KINDS = ("fact", "procedure", "preference", "convention", "pitfall")


def fill(desk: Desk, n: int, seed: int = 7) -> float:
    rng = random.Random(seed)
    human = Caller.human()
    t0 = time.perf_counter()
    for start in range(0, n, 10_000):
        reqs = [
            WriteRequest(
                content=sentence(rng),
                kind=rng.choice(KINDS),
                scope=Scope.GLOBAL if rng.random() < 0.7 else Scope.USER,
                importance=rng.randint(1, 5),
            )
            for _ in range(min(10_000, n - start))
        ]
        failed = [
            r for r in desk.cairn.memories.write_many(human, reqs) if isinstance(r, Exception)
        ]
        if failed:
            raise SystemExit(f"{len(failed)} writes failed, first: {failed[0]}")
    return time.perf_counter() - t0


def until_loaded(window: MemoriesWindow, action: Callable[[], object]) -> float:
    """Milliseconds from `action` until the model says rows landed (and the view painted)."""
    loop = QEventLoop()
    window.model.loaded.connect(loop.quit)
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    guard.start(30_000)
    t0 = time.perf_counter()
    action()
    loop.exec()
    QApplication.processEvents()  # lay out and paint the new rows
    elapsed = (time.perf_counter() - t0) * 1000
    window.model.loaded.disconnect(loop.quit)
    if not guard.isActive():
        raise SystemExit("no rows within 30 s")
    return elapsed


def summary(samples: list[float]) -> str:
    return (
        f"median {statistics.median(samples):.1f} ms  p95 {percentile(samples, 95):.1f} ms  "
        f"max {max(samples):.1f} ms  (n={len(samples)})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--pages", type=int, default=60)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    with scratch_cairn() as cairn:
        desk = Desk(cairn)
        seconds = fill(desk, args.memories)
        print(f"store: {args.memories} memories written in {seconds:.1f} s")
        window: MemoriesWindow | None = None

        def show() -> None:
            nonlocal window
            window = desk.open(MemoriesWindow)

        # The window is built inside the timed action: first rows = construction + first page.
        holder = MemoriesWindow(desk)  # warm imports and styles once; not measured
        holder.close()
        holder.deleteLater()
        loop_first = QEventLoop()
        t0 = time.perf_counter()
        show()
        assert window is not None
        window.model.loaded.connect(loop_first.quit)
        if window.model.pages == 0:
            loop_first.exec()
        app.processEvents()
        first = (time.perf_counter() - t0) * 1000
        window.model.loaded.disconnect(loop_first.quit)
        print(
            f"first rows shown: {first:.1f} ms ({window.model.rowCount()} rows in the first page)"
        )

        model = window.model
        pages: list[float] = []
        for _ in range(args.pages):
            if not model.canFetchMore(QModelIndex()):
                break
            pages.append(until_loaded(window, lambda: model.fetchMore(QModelIndex())))
        print(f"fetchMore page ({model.page_size} rows): {summary(pages)}")
        print(f"rows in the table after paging: {model.rowCount()}")

        searches: list[float] = []
        rng = random.Random(11)
        words = ["billing", "port", "deploys", "pnpm", "staging", "timeout", "cargo", "schema"]
        for _ in range(30):
            query = " ".join(rng.sample(words, rng.choice((1, 2))))
            window.search.setText(query)  # the debounce is the person's pause, not measured
            searches.append(until_loaded(window, window.apply_filters))
        print(f"search typed -> results shown: {summary(searches)}")
        window.search.clear()
        back = until_loaded(window, window.apply_filters)
        print(f"search cleared -> first page of the listing again: {back:.1f} ms")
        desk.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
