"""How the windows behave over a big store: opens each one offscreen over a copy of a store made
by `scripts/bigstore.py` and times what a person waits for - the window open with its first
rows, scrolling to the end, a search, a filter, a decision - while a 10 ms heartbeat on the GUI
thread measures the longest the thread was blocked during each step.

    python scripts/bench_desktop.py HOME [--only review memories ...] [--repeat 5]

HOME is left as it is: the store is copied first (adopting and rejecting change it).
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QElapsedTimer, QEventLoop, QModelIndex, QTimer
from PySide6.QtWidgets import QApplication, QTableWidget

from core.app import Cairn
from core.paths import resolve_paths
from desktop.desk import Desk, ToolWindow
from desktop.tray import window_class

if TYPE_CHECKING:
    from desktop.windows.memories import MemoriesWindow
    from desktop.windows.review import ReviewWindow

# WORKAROUND: the window modules are imported after the QApplication exists (inside the bench
# functions): imported at the top, this script crashed with a segmentation fault in Qt's event
# loop while the review window's first load ran, 3 runs of 3 (PySide6 6.11.3); not understood.
TIMEOUT_MS = 600_000


class Heartbeat:
    """A 10 ms timer on the GUI thread: the longest gap between its ticks since `mark` is the
    longest the thread could not run anything (a freeze a person would feel past ~200 ms)."""

    def __init__(self) -> None:
        self.clock = QElapsedTimer()
        self.clock.start()
        self.last = 0
        self.worst = 0
        # The GUI thread's own CPU time over the worst gap: a gap much longer than it was spent
        # waiting - for the GIL a worker held, or for a CPU the machine's other work had.
        self.cpu = time.thread_time()
        self.worst_cpu = 0.0
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.timer.start()

    def _tick(self) -> None:
        now, cpu = self.clock.elapsed(), time.thread_time()
        if now - self.last > self.worst:
            self.worst = now - self.last
            self.worst_cpu = (cpu - self.cpu) * 1000
        self.last, self.cpu = now, cpu

    def mark(self) -> None:
        self.last = self.clock.elapsed()
        self.cpu = time.thread_time()
        self.worst = 0
        self.worst_cpu = 0.0

    def stalled(self) -> int:
        """The longest gap (ms) since `mark`, counting the one still open."""
        return max(self.worst, self.clock.elapsed() - self.last)


def until(done: Callable[[], bool], timeout_ms: int = TIMEOUT_MS) -> None:
    """Run the event loop until `done()` (polled every 2 ms) or raise after `timeout_ms`."""
    if done():
        return
    loop = QEventLoop()
    poll = QTimer()
    poll.setInterval(2)
    poll.timeout.connect(lambda: loop.quit() if done() else None)
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    poll.start()
    guard.start(timeout_ms)
    loop.exec()
    poll.stop()
    if not done():
        raise SystemExit(f"timed out after {timeout_ms} ms")


class Bench:
    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.beat = Heartbeat()
        self.rows: list[tuple[str, str, str]] = []

    def idle(self) -> bool:
        return self.desk.worker.in_flight == 0

    def step(self, label: str, action: Callable[[], Any], done: Callable[[], bool]) -> float:
        """Time `action` until `done()` and the worker is idle, then one more paint; record the
        milliseconds and the longest freeze."""
        self.beat.mark()
        t0 = time.perf_counter()
        action()
        until(lambda: done() and self.idle())
        QApplication.processEvents()
        ms = (time.perf_counter() - t0) * 1000
        self.record(label, f"{ms:9.1f} ms", self.beat.stalled())
        return ms

    def record(self, label: str, figure: str, stalled: int) -> None:
        note = "  <- freeze" if stalled > 200 else ""
        cpu = self.beat.worst_cpu
        self.rows.append((label, figure, f"{stalled:6d} ms{note}"))
        print(
            f"{label:52} {figure:>34}   GUI blocked at most {stalled:5d} ms "
            f"(its own CPU {cpu:5.0f} ms){note}",
            flush=True,
        )

    def samples(self, label: str, values: list[float], stalled: int) -> None:
        figure = (
            f"median {statistics.median(values):.1f} max {max(values):.1f} ms (n={len(values)})"
        )
        self.record(label, figure, stalled)

    def open(self, key: str) -> ToolWindow:
        kind = window_class(key)
        holder: list[ToolWindow] = []

        def act() -> None:
            window = self.desk.open(kind)
            window.resize(*kind.default_size)
            holder.append(window)

        self.step(f"{key}: open until its first load is shown", act, lambda: bool(holder))
        return holder[0]


def decided(w: ReviewWindow, b: Bench, before: int) -> bool:
    return w.pending_count() < before and b.idle()


def more_rows(w: MemoriesWindow, b: Bench, rows: int) -> bool:
    model = w.model
    return (model.rowCount() > rows or not model.canFetchMore(QModelIndex())) and b.idle()


def search(w: MemoriesWindow, query: str) -> None:
    w.search.setText(query)
    w.apply_filters()


def first_and_last(table: QTableWidget) -> None:
    table.selectRow(0)
    table.selectRow(table.rowCount() - 1)


def bench_review(b: Bench, repeat: int) -> None:
    from desktop.windows.review import ReviewWindow

    w = b.open("review")
    assert isinstance(w, ReviewWindow)
    table = w.queue.table
    print(f"  {w.queue.count_label.text()}; rows {table.rowCount()}; waiting {w.pending_count()}")
    b.step("review: scroll to the last listed row", table.scrollToBottom, lambda: True)
    for combo, what in (
        (w.queue.agent_filter, "an agent"),
        (w.queue.kind_filter, "a kind"),
        (w.queue.reason_filter, "a reason"),
    ):
        times = []
        b.beat.mark()
        for i in range(1, combo.count()):
            t0 = time.perf_counter()
            combo.setCurrentIndex(i)
            combo.activated.emit(i)  # the proposals it keeps are read from the store
            until(b.idle)
            QApplication.processEvents()
            times.append((time.perf_counter() - t0) * 1000)
            print(f"  filter {combo.itemText(i)}: {w.queue.count_label.text()}")
        if times:
            b.samples(f"review: choose {what} in the filter", times, b.beat.stalled())
        combo.setCurrentIndex(0)
        combo.activated.emit(0)
        until(b.idle)
        QApplication.processEvents()
    for verb, act in (("adopt", w.adopt), ("reject", w.reject)):
        times = []
        b.beat.mark()
        for _ in range(repeat):
            before = w.pending_count()
            table.setCurrentCell(0, 0)
            QApplication.processEvents()
            item = w.current()
            t0 = time.perf_counter()
            act()
            until(functools.partial(decided, w, b, before))
            QApplication.processEvents()
            times.append((time.perf_counter() - t0) * 1000)
            if item is None or item["id"] == (w.current() or {}).get("id"):
                print(f"  {verb}: the pane still shows the decided proposal")
            # The change channel's reload (at most once a second) lands after the decision.
            until(b.idle, 30_000)
        b.samples(f"review: {verb} the first proposal (A / R)", times, b.beat.stalled())
        print(f"  status: {w.status.text()!r}")
    b.beat.mark()
    QTimer.singleShot(1500, lambda: None)
    until(lambda: b.beat.clock.elapsed() - b.beat.last < 20 and b.idle(), 5000)
    w.close()


def bench_memories(b: Bench, pages: int) -> None:
    from desktop.windows.memories import MemoriesWindow

    w = b.open("memories")
    assert isinstance(w, MemoriesWindow)
    model, table = w.model, w.table
    print(f"  {w.count.text()}")
    # Scrolling to the end the way the view asks for more: each time the bar reaches the bottom.
    times = []
    worst = 0
    t_all = time.perf_counter()
    n = 0
    while model.canFetchMore(QModelIndex()) and (pages <= 0 or n < pages):
        b.beat.mark()
        rows = model.rowCount()
        t0 = time.perf_counter()
        table.scrollToBottom()
        until(functools.partial(more_rows, w, b, rows))
        QApplication.processEvents()
        times.append((time.perf_counter() - t0) * 1000)
        worst = max(worst, b.beat.stalled())
        n += 1
    total = time.perf_counter() - t_all
    if times:
        b.samples(f"memories: one more page ({model.page_size} rows) at the bottom", times, worst)
        print(
            f"  {n} pages, {model.rowCount():,} rows in {total:.1f} s; first 10 pages median "
            f"{statistics.median(times[:10]):.1f} ms, last 10 median "
            f"{statistics.median(times[-10:]):.1f} ms; label: {w.count.text()!r}"
        )
    last = model.rowCount() - 1
    b.step(
        "memories: select the last row (its detail)",
        lambda: table.selectRow(last),
        lambda: w.detail is not None,
    )
    for query in ("staging database port", "billing", "部署 测试", "Caroline adoption agency"):
        b.step(
            f"memories: search {query!r}",
            functools.partial(search, w, query),
            lambda: not model.loading,
        )
        print(f"  {w.count.text()!r}")
    w.search.clear()
    b.step("memories: search cleared, listing again", w.apply_filters, lambda: not model.loading)
    for combo in (w.workspace_filter, w.kind_filter, w.agent_filter, w.status_filter):
        times, worst = [], 0
        for i in range(1, combo.count()):
            combo.setCurrentIndex(i)
            times.append(
                b.step(
                    f"  filter {combo.objectName()} = {combo.currentText()!r}",
                    w.apply_filters,
                    lambda: not model.loading,
                )
            )
            worst = max(worst, b.beat.stalled())
            print(f"    {w.count.text()!r}")
        combo.setCurrentIndex(0)
        if times:
            b.samples(f"memories: filter by {combo.objectName()}, first page", times, worst)
    w.close()


def bench_identity(b: Bench) -> None:
    from desktop.windows.identity import IdentityWindow

    w = b.open("identity")
    assert isinstance(w, IdentityWindow)
    print(f"  versions listed: {w.side.versions.rowCount()}")
    for doc in ("user", "soul:default"):
        b.step(f"identity: choose {doc}", functools.partial(w.select_document, doc), lambda: True)
        print(f"  versions listed: {w.side.versions.rowCount()}")
    versions = w.side.versions
    if versions.rowCount() > 1:
        b.step(
            "identity: select the oldest and newest version (diff)",
            functools.partial(first_and_last, versions),
            lambda: True,
        )
    w.close()


def bench_simple(b: Bench, key: str) -> None:
    b.open(key).close()


def bench_export(b: Bench, out: Path) -> None:
    from desktop.windows.archive import ArchiveWindow

    w = b.open("archive")
    assert isinstance(w, ArchiveWindow)
    w.out_path.setText(str(out))
    b.step("archive: export everything", w.export, lambda: w.manifest is not None)
    print(f"  {out.stat().st_size / 1e6:.1f} MB; {w.export_summary.toPlainText()[:200]!r}")
    w.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("home", type=Path, help="a CAIRN_HOME made by scripts/bigstore.py")
    parser.add_argument(
        "--only",
        nargs="+",
        default=["review", "memories", "identity", "health", "settings", "archive", "others"],
    )
    parser.add_argument("--repeat", type=int, default=5, help="adoptions and rejections")
    parser.add_argument("--pages", type=int, default=0, help="memories pages (0: to the end)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="cbd", dir="/tmp"))
    try:
        t0 = time.perf_counter()
        shutil.copytree(args.home, work / "home", symlinks=True)
        print(f"store copied in {time.perf_counter() - t0:.1f} s to {work}")
        os.environ["HOME"] = str(work / "home")
        paths = resolve_paths({"CAIRN_HOME": str(work / "home")})
        app = QApplication.instance() or QApplication([])
        t0 = time.perf_counter()
        cairn = Cairn.open(paths)
        print(f"Cairn.open: {(time.perf_counter() - t0) * 1000:.0f} ms")
        desk = Desk(cairn)
        b = Bench(desk)
        try:
            window_class("health")(desk).close()  # imports and styles warmed once
            if "review" in args.only:
                bench_review(b, args.repeat)
            if "memories" in args.only:
                bench_memories(b, args.pages)
            if "identity" in args.only:
                bench_identity(b)
            for key in ("health", "settings", "policy", "agents"):
                if key in args.only or ("others" in args.only and key in ("policy", "agents")):
                    bench_simple(b, key)
            if "archive" in args.only:
                bench_export(b, work / "export.zip")
        finally:
            desk.close()
            cairn.close()
            del app
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
