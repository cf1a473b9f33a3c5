"""Recall counts and last-recalled times: usage statistics, batched, written off the request path.

Use is not a change: these writes create no revision and no audit event, publish nothing, and may
lose the last few seconds of counts if the process is killed (documented; the counts are hints for
ranking and housekeeping, never the truth about a memory). A recall while the clock reads before
2026 is counted without its time; a last-recalled time after now is brought back to now by
housekeeping (`bring_back`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from core.clock import FUTURE_SLACK_MS, Clock, before_floor
from core.failures import BackgroundFailures
from core.store import Store
from core.writer import WriteTx


class UsageRecorder:
    def __init__(
        self, store: Store, interval_ms: int, failures: BackgroundFailures, clock: Clock
    ) -> None:
        self._store = store
        self._failures = failures
        self._clock = clock
        self._interval = interval_ms / 1000
        self._pending: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cairn-usage", daemon=True)
        self._thread.start()

    def record(self, memory_ids: Iterable[str], at_ms: int) -> None:
        with self._lock:
            for mid in memory_ids:
                count, at = self._pending.get(mid, (0, at_ms))
                self._pending[mid] = (count + 1, max(at, at_ms))

    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def flush(self) -> int:
        """Write what has accumulated, in one transaction; return how many memories it touched.

        Raises:
            CairnError: the write failed (a busy store, a full disk); the batch is kept, merged
                with what was recorded meanwhile, for the next flush (until 2026-11-30 it was
                dropped).
        """
        with self._lock:
            batch, self._pending = self._pending, {}
        if not batch:
            return 0
        try:
            return self._store.writer.run(_writing(batch))
        except BaseException:
            self._put_back(batch)
            raise

    def _put_back(self, batch: dict[str, tuple[int, int]]) -> None:
        with self._lock:
            for mid, (count, at) in batch.items():
                more, later = self._pending.get(mid, (0, at))
                self._pending[mid] = (count + more, max(at, later))

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.flush()
            except Exception as e:  # noqa: BLE001 - counted in health and retried next period
                self._failures.record("usage", e, self._clock.now_ms())

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        try:
            self.flush()
        except Exception as e:  # noqa: BLE001 - shutdown must finish; the loss is reported
            self._failures.record("usage", e, self._clock.now_ms())


def bring_back(tx: WriteTx, now_ms: int) -> int:
    """Set last-recalled times after now (`core.clock.after_now`) to now: a memory recalled
    while the clock read 2100 would otherwise read "last used 2100" and never count as unused.
    Returns how many it set."""
    return tx.conn.execute(
        "UPDATE usage SET last_recalled_at = ? WHERE last_recalled_at > ?",
        (now_ms, now_ms + FUTURE_SLACK_MS),
    ).rowcount


def _writing(batch: dict[str, tuple[int, int]]) -> Callable[[WriteTx], int]:
    """The write job adding `batch` (memory id: count, last recalled) to the usage rows. A time
    before 2026 (`core.clock.FLOOR_MS`: the clock was wrong) is not written, the count is."""

    def job(tx: WriteTx) -> int:
        # Only memories that still exist; a memory forgotten meanwhile just loses its counts.
        tx.conn.executemany(
            "INSERT INTO usage (memory_id, use_count, last_recalled_at) "
            "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM memory WHERE id = ?) "
            "ON CONFLICT(memory_id) DO UPDATE SET use_count = use_count + excluded.use_count, "
            "last_recalled_at = coalesce(max(last_recalled_at, excluded.last_recalled_at), "
            "last_recalled_at, excluded.last_recalled_at)",
            [
                (mid, count, None if before_floor(at) else at, mid)
                for mid, (count, at) in batch.items()
            ],
        )
        return len(batch)

    return job
