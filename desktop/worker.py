"""Every service call the windows make runs here, off the GUI thread; its result (or error)
comes back on the GUI thread. Widgets never call a service directly: a slow store would freeze
them, and in tests the store refuses the GUI thread outright (`Store.refuse_thread`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import shiboken6
from PySide6.QtCore import QObject, Signal, Slot

log = logging.getLogger(__name__)

T = TypeVar("T")
Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]


class Worker(QObject):
    """Runs callables on a small thread pool and delivers their outcome on the GUI thread.

    An outcome whose `owner` widget was destroyed meanwhile is dropped; an error without an
    `on_error` goes to the presenter (one place that tells the person)."""

    _finished = Signal(object)

    def __init__(self, report: Failed, *, threads: int = 4, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._report = report
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="cairn-ui")
        self._in_flight = 0
        self._closed = False
        self._finished.connect(self._deliver)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def call(
        self,
        fn: Callable[..., T],
        *args: Any,
        on_done: Callable[[T], None] | None = None,
        on_error: Failed | None = None,
        owner: QObject | None = None,
    ) -> Future[T]:
        """Run `fn(*args)` off the GUI thread; then, on the GUI thread, `on_done(result)` or
        `on_error(error)` (default: the presenter). After `shutdown` (Cairn is quitting), the
        call is dropped."""
        if self._closed:
            dropped: Future[T] = Future()
            dropped.cancel()
            return dropped
        self._in_flight += 1
        future = self._pool.submit(fn, *args)
        future.add_done_callback(lambda f: self._finished.emit((f, on_done, on_error, owner)))
        return future

    @Slot(object)
    def _deliver(
        self, outcome: tuple[Future[Any], Done | None, Failed | None, QObject | None]
    ) -> None:
        future, on_done, on_error, owner = outcome
        self._in_flight -= 1
        try:
            if owner is not None and not shiboken6.isValid(owner):
                return
            error = future.exception()
            if error is not None:
                (on_error or self._report)(error)
            elif on_done is not None:
                on_done(future.result())
        except Exception as e:  # a broken callback is reported, never fatal
            log.exception("a window's callback failed")
            self._report(e)

    def shutdown(self) -> None:
        self._closed = True
        self._pool.shutdown(wait=True, cancel_futures=True)
