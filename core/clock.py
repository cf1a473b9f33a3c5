"""Time as a capability: the service reads the clock through this protocol so tests can move it;
and when the clock cannot be trusted - it reads before 2026 (`FLOOR_MS`), or it was just set
(`ClockWatch`)."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from core.errors import ClockWrong

log = logging.getLogger(__name__)


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


# -- a clock Cairn cannot trust ------------------------------------------------------------------

# The earliest time Cairn trusts: 2026-01-01 00:00 UTC, before this version existed. A clock
# reading earlier is wrong - a dead clock battery reads 1970 or 2000 until the network sets it.
FLOOR_MS = 1_767_225_600_000
# A round whose wall clock moved more than this unlike the boot clock had its clock set.
STEP_MS = 600_000
# How long health names the last step, in boot-clock time.
_STEP_SHOWN_MS = 86_400_000
# A stamp this far after now was written under a clock running ahead (or the clock was set back
# since): Cairn does not believe it.
FUTURE_SLACK_MS = 60_000


def before_floor(ms: int) -> bool:
    """Whether a reading of the clock is before the earliest time Cairn trusts (`FLOOR_MS`)."""
    return ms < FLOOR_MS


def after_now(stamp_ms: int, now_ms: int) -> bool:
    """Whether a stored time is later than now (beyond `FUTURE_SLACK_MS`): written while the
    clock ran ahead, or the clock was set back since."""
    return stamp_ms > now_ms + FUTURE_SLACK_MS


def refuse_before_floor(ms: int) -> None:
    """Refuse a write asked for at `ms` when that is before the floor.

    Raises:
        ClockWrong: what the clock reads, that nothing was stored and what to do.
    """
    if before_floor(ms):
        raise ClockWrong(
            f"{wrong_clock(ms)}; nothing was stored. Set the computer's clock to the right time "
            "(or let the network set it), then try again",
            data={"clock": utc_minute(ms)},
        )


def wrong_clock(ms: int) -> str:
    """What is wrong with a clock reading before the floor, in words a person acts on."""
    return (
        f"this computer's clock reads {utc_minute(ms)}, before {utc_minute(FLOOR_MS)}, so it "
        "is wrong (a dead clock battery, or the network has not set it yet)"
    )


class BootClock(Protocol):
    def boot_ms(self) -> int:
        """Milliseconds since some fixed point, never set: only differences mean anything."""
        ...


class SystemBootClock:
    """CLOCK_BOOTTIME on Linux - it counts time suspended, so a laptop's resume moves it as the
    wall clock moves; CLOCK_MONOTONIC elsewhere."""

    def boot_ms(self) -> int:
        if hasattr(time, "CLOCK_BOOTTIME"):
            return time.clock_gettime_ns(time.CLOCK_BOOTTIME) // 1_000_000
        return time.monotonic_ns() // 1_000_000


@dataclass(frozen=True)
class Step:
    """The wall clock was set: it read `to_ms` where, by the boot clock, it should have read
    `from_ms` (at boot-clock time `at_boot_ms`). `while_stopped`: seen at start, where the store's
    newest event, at `from_ms`, is after the clock's `to_ms` - it should have read that at least."""

    from_ms: int
    to_ms: int
    at_boot_ms: int
    while_stopped: bool = False


class ClockWatch:
    """Decides, once a housekeeping round, whether that round may act on time: purge what
    expired, archive what went unused, end sessions. Not while the clock reads before
    `FLOOR_MS`, nor in a round where, since the previous one, the wall clock moved more than
    `STEP_MS` unlike the boot clock (the clock was set); the next steady round acts again."""

    def __init__(self, clock: Clock, boot: BootClock | None = None) -> None:
        self._clock = clock
        self._boot = boot or SystemBootClock()
        self._lock = threading.Lock()
        self._previous: tuple[int, int] | None = None  # (wall, boot) at the last round
        self._wait_first = False  # the store's newest event was after now at start
        self.last_step: Step | None = None

    def started(self, newest_ms: int | None) -> None:
        """At start, with the time of the store's newest event. One after now (`after_now`) is a
        step the boot clock cannot see - the clock was set back while Cairn was stopped, or it
        reads wrong now: the first round does not act on time, and health says so."""
        now = self._clock.now_ms()
        if newest_ms is None or not after_now(newest_ms, now):
            return
        with self._lock:
            self.last_step = Step(newest_ms, now, self._boot.boot_ms(), while_stopped=True)
            self._wait_first = True
        log.warning(
            "the store's newest event is from %s, after this computer's clock (%s): the clock "
            "was set back while Cairn was stopped, or it reads wrong now; housekeeping that acts "
            "on time waits for the next round",
            utc_minute(newest_ms),
            utc_minute(now),
        )

    def round(self) -> bool:
        """At the start of a round: whether it may act on time now."""
        wall, boot = self._clock.now_ms(), self._boot.boot_ms()
        with self._lock:
            previous, self._previous = self._previous, (wall, boot)
            waits, self._wait_first = self._wait_first, False
            step = None
            if previous is not None:
                expected = previous[0] + (boot - previous[1])
                if abs(wall - expected) > STEP_MS:
                    step = self.last_step = Step(expected, wall, boot)
        if step is not None:
            log.warning(
                "the clock was set from %s to %s: housekeeping that acts on time (expiry, "
                "archiving, sessions) waits for the next round",
                utc_minute(step.from_ms),
                utc_minute(step.to_ms),
            )
            return False
        if waits:  # said at start (`started`)
            return False
        if before_floor(wall):
            log.warning(
                "%s: housekeeping that acts on time waits until it is set", wrong_clock(wall)
            )
            return False
        return True

    def warnings(self) -> dict[str, str]:
        """Health's `clock_wrong` (the clock reads before the floor, now) and `clock_stepped`
        (the last step, for a day after it)."""
        out: dict[str, str] = {}
        now = self._clock.now_ms()
        if before_floor(now):
            out["clock_wrong"] = (
                f"{wrong_clock(now)}. Until it is set, writes are refused (`clock_wrong`: "
                "nothing is stored), housekeeping does not expire, archive or end anything, and "
                "no scheduled backup is taken; "
                "reads go on. Set the clock, or connect to the network so it is set - no restart "
                "is needed"
            )
        step = self.last_step
        if step is not None and self._boot.boot_ms() - step.at_boot_ms < _STEP_SHOWN_MS:
            if step.while_stopped:
                what = (
                    f"the store's newest event is from {utc_minute(step.from_ms)}, after this "
                    f"computer's clock at start ({utc_minute(step.to_ms)}): the clock was set "
                    "back while Cairn was stopped, or it reads wrong now; housekeeping skipped "
                    "its first round"
                )
            else:
                what = (
                    f"the clock was set from {utc_minute(step.from_ms)} to "
                    f"{utc_minute(step.to_ms)}; housekeeping skipped that round"
                )
            out["clock_stepped"] = (
                f"{what} (it expires, archives and ends sessions by the clock) and acts again "
                "once the clock runs steadily. If the clock reads the right time now, nothing is "
                "needed; if not, set it. What was written while the clock was wrong keeps the "
                "times it was stamped with, except that times of sessions, agents, recalls and "
                "proposals after now are set to now from then on"
            )
        return out
