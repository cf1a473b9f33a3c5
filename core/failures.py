"""Failures of background work (index upkeep, recall counts, janitor, backups, watchers): counted
per site with the last error, so health can show them instead of their being swallowed."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from core.clock import utc_minute

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SiteFailures:
    site: str
    count: int
    last_error: str
    last_at_ms: int


# A site failing again and again with the same error (recall counts flushed every 2 s on a
# full disk) is logged once, then at most this often with how many times it failed meanwhile.
REPEAT_LOG_MS = 10 * 60 * 1000


@dataclass
class _Logged:
    text: str
    at_ms: int
    since: int = 0  # failures with this text not logged since


class BackgroundFailures:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sites: dict[str, SiteFailures] = {}
        self._logged: dict[str, _Logged] = {}

    def record(self, site: str, error: BaseException | str, at_ms: int) -> None:
        """Count a failure at `site` for health. The log gets it when the site first fails or
        its error changes; a repeat, at most every `REPEAT_LOG_MS`, saying how many there were."""
        text = str(error) or type(error).__name__
        with self._lock:
            previous = self._sites.get(site)
            count = previous.count + 1 if previous else 1
            self._sites[site] = SiteFailures(site, count, text, at_ms)
            logged = self._logged.get(site)
            if logged is None or logged.text != text:
                self._logged[site] = _Logged(text, at_ms)
                line = text
            elif not 0 <= at_ms - logged.at_ms < REPEAT_LOG_MS:  # a clock set back logs too
                again = logged.since + 1
                line = (
                    f"{text} ({again} times since {utc_minute(logged.at_ms)})"
                    if again > 1
                    else text
                )
                self._logged[site] = _Logged(text, at_ms)
            else:
                logged.since += 1
                return
        log.warning("background work failed at %s: %s", site, line)

    def snapshot(self) -> dict[str, SiteFailures]:
        with self._lock:
            return dict(self._sites)
