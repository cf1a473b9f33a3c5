"""Failures of background work (index upkeep, recall counts, janitor, backups, watchers): counted
per site with the last error, so health can show them instead of their being swallowed."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SiteFailures:
    site: str
    count: int
    last_error: str
    last_at_ms: int


class BackgroundFailures:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sites: dict[str, SiteFailures] = {}

    def record(self, site: str, error: BaseException | str, at_ms: int) -> None:
        text = str(error) or type(error).__name__
        with self._lock:
            previous = self._sites.get(site)
            count = previous.count + 1 if previous else 1
            self._sites[site] = SiteFailures(site, count, text, at_ms)
        log.warning("background work failed at %s: %s", site, text)

    def snapshot(self) -> dict[str, SiteFailures]:
        with self._lock:
            return dict(self._sites)
