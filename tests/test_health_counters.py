"""Health's activity figures over a real socket: what counts as a write, what survives a restart,
and which failed requests count (until 2026-11-30 an adoption was no write, `last_write` was
forgotten at restart, and only requests that succeeded were counted)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from core.daemon import Runtime
from core.runtime import socket_path
from tests.serving import RawClient, paths_for, served_in_thread


def connect(runtime: Runtime, **hello: Any) -> RawClient:
    c = RawClient(socket_path(runtime.paths))
    assert "result" in c.hello(**hello)
    return c


def health(c: RawClient) -> dict[str, Any]:
    result: dict[str, Any] = c.request("health.get")["result"]
    return result


def test_an_adoption_is_a_write_and_last_write_outlives_a_restart(short_tmp: Path) -> None:
    home, ws = short_tmp / "h", short_tmp / "ws"
    ws.mkdir()
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        bot = connect(runtime, agent="bot", workspace=str(ws))
        proposal = bot.request(
            "memory.write", {"content": "an idea about caching", "kind": "idea", "scope": "project"}
        )["result"]
        proposed = health(person)["last_write"]
        assert proposed is not None
        time.sleep(0.05)
        assert person.request("review.adopt", {"id": proposal["suggestion_id"]})["result"]
        adopted = health(person)["last_write"]
        assert adopted is not None and adopted > proposed  # the adoption stored a memory
        person.close()
        bot.close()
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        again = health(person)["last_write"]
        assert again is not None and adopted - 1000 < again <= adopted  # read from the store
        person.close()


def test_failed_requests_count_and_every_refusal_and_hold_reason_shows(short_tmp: Path) -> None:
    home, ws = short_tmp / "h", short_tmp / "ws"
    ws.mkdir()
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        bot = connect(runtime, agent="bot", workspace=str(ws))
        fact = "the billing service listens on port 8443 in staging"
        assert "result" in bot.request(
            "memory.write", {"content": fact, "kind": "fact", "scope": "project"}
        )
        failing = [
            ("memory.write", {"content": "x", "kind": "nokind", "scope": "project"}),
            ("memory.get", {"id": "m_nonexistent"}),
            ("nope.x", {}),
            ("review.list", {}),  # forbidden
        ]
        for method, params in failing:
            assert "error" in bot.request(method, params)
        # held for the policy (ideas wait for review) and for resembling the fact
        held = bot.request(
            "memory.write", {"content": fact + " too", "kind": "idea", "scope": "project"}
        )["result"]
        assert held["status"] == "pending", held
        wrong = RawClient(socket_path(runtime.paths))
        assert "error" in wrong.hello(agent="other", token="wrong", workspace=str(ws))
        wrong.close()
        assert "result" in person.request("agent.pause", {"name": "bot"})
        assert bot.request("capabilities")["error"]["data"]["error"] == "agent_paused"
        snapshot = health(person)
        mine = snapshot["agents"]["bot"]
        assert mine["requests"] == 1 + len(failing) + 1 + 1, mine
        assert mine["writes"] == 2, mine  # the stored fact and the held idea; not the failed one
        assert snapshot["refusals"].get("forbidden") == 1, snapshot["refusals"]
        assert snapshot["refusals"].get("unauthenticated") == 1, snapshot["refusals"]
        assert snapshot["refusals"].get("agent_paused") == 1, snapshot["refusals"]
        assert mine["refusals"] == 2, mine  # forbidden, agent_paused: the wrong token is no one's
        assert snapshot["held_for_review"].get("similar") == 1, snapshot["held_for_review"]
        person.close()
        bot.close()
