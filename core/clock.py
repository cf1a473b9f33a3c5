"""Time as a capability: the service reads the clock through this protocol so tests can move it."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        ...


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


def utc_minute(ms: int) -> str:
    """A stored time (ms since the epoch) as `2026-11-30 15:40 UTC`, for messages and files
    that do not know the reader's time zone."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
