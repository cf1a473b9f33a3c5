"""The activity counters announce themselves on the change bus: a refusal or a search stores
nothing, yet whoever shows the counters hears about it - throttled, with the last count never
missed, and silent once closed."""

from __future__ import annotations

import threading

from core.activity import THROTTLE_THREAD, Activity
from core.app import Cairn
from core.changes import ChangeBus, ChangeSet, Topic
from core.model import Caller

BURST = 100


class Heard:
    """What a listener on the bus heard: each change set, with the refusals counted by then."""

    def __init__(self, bus: ChangeBus, activity: Activity, until: int) -> None:
        self.activity = activity
        self.sets: list[ChangeSet] = []
        self.counts: list[int] = []
        self.until = until
        self.reached = threading.Event()
        self._lock = threading.Lock()
        bus.subscribe(self)

    def __call__(self, change_set: ChangeSet) -> None:
        seen = sum(self.activity.refusals.values())
        with self._lock:
            self.sets.append(change_set)
            self.counts.append(seen)
        if seen >= self.until:
            self.reached.set()


def announcers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THROTTLE_THREAD and t.is_alive()]


def test_a_burst_of_refusals_is_announced_a_few_times_and_the_last_count_arrives() -> None:
    bus = ChangeBus()
    activity = Activity(bus=bus)
    heard = Heard(bus, activity, until=BURST)
    try:
        for i in range(BURST):
            activity.refusal("scribe" if i % 2 else None, "secret")
        assert heard.reached.wait(10), heard.counts
    finally:
        activity.close()
    assert 1 <= len(heard.sets) <= 3, heard.counts  # throttled: not one per refusal
    assert heard.counts[-1] == BURST  # the last announcement came after the last refusal
    assert heard.counts == sorted(heard.counts)
    for change_set in heard.sets:
        assert change_set.topics == frozenset({Topic.HEALTH}) and change_set.changes == ()
    assert activity.agents["scribe"].refusals == BURST // 2


def test_closing_drops_the_pending_announcement() -> None:
    bus = ChangeBus()
    activity = Activity(bus=bus, interval_s=60.0)
    heard = Heard(bus, activity, until=1)
    activity.refusal("scribe", "secret")
    assert heard.reached.wait(10)  # the first refusal after a quiet spell is announced at once
    activity.refusal("scribe", "secret")  # the next waits for the interval...
    activity.close()  # ...and is dropped with it
    for thread in announcers():
        thread.join(5)  # a cancelled timer ends at once; an uncancelled one would wait 60 s
    assert announcers() == []
    activity.refusal("scribe", "secret")  # closed: counted, not announced
    assert heard.counts == [1]
    assert activity.agents["scribe"].refusals == 3


def test_an_open_cairn_announces_its_counters_on_its_own_bus(cairn: Cairn) -> None:
    heard = Heard(cairn.bus, cairn.activity, until=1)
    cairn.activity.request("scribe", verified=False, at_ms=1, write=True, search=False)
    cairn.activity.refusal("scribe", "secret")
    assert heard.reached.wait(10)
    assert heard.sets[-1].topics == frozenset({Topic.HEALTH})
    snapshot = cairn.health.snapshot(Caller.human())
    assert snapshot["refusals"] == {"secret": 1}
    assert snapshot["agents"]["scribe"]["refusals"] == 1
