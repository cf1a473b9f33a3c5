"""Health's activity figures over a real socket: what counts as a write, what survives a restart,
and which failed requests count (until 2026-11-30 an adoption was no write, `last_write` was
forgotten at restart, and only requests that succeeded were counted)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from core.daemon import Runtime
from core.runtime import socket_path
from tests.serving import RawClient, paths_for, served_in_thread, write_settings


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


def test_a_rate_limited_request_counts_as_the_agents_request(short_tmp: Path) -> None:
    """docs/health.md: every request after the hello counts. Of 40 pipelined requests 24 were
    refused `rate_limited`, and the agent's `requests` rose by 16: only those that ran."""
    home, ws = short_tmp / "h", short_tmp / "ws"
    ws.mkdir()
    write_settings(home, "[server]\nmax_in_flight = 2\n")
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        bot = connect(runtime, agent="bot", workspace=str(ws))
        before = health(person)
        frames = [
            {"jsonrpc": "2.0", "id": 100 + i, "method": "memory.search", "params": {"query": "x y"}}
            for i in range(30)
        ]
        bot.send("".join(json.dumps(f) + "\n" for f in frames).encode())
        answers = [bot.read() for _ in frames]
        limited = sum(
            a.get("error", {}).get("data", {}).get("error") == "rate_limited" for a in answers
        )
        assert limited > 0, answers  # the test needs some refused
        after = health(person)
        mine, was = (
            after["agents"]["bot"],
            before["agents"].get("bot", {"requests": 0, "refusals": 0}),
        )
        assert mine["requests"] - was["requests"] == len(frames), (limited, mine)
        assert mine["refusals"] - was["refusals"] == limited, mine
        assert after["refusals"].get("rate_limited") == limited, after["refusals"]
        person.close()
        bot.close()


def test_a_write_refused_as_a_secret_is_no_write_and_leaves_last_write(short_tmp: Path) -> None:
    """A write refused for holding a secret counted in the agent's `writes` and moved
    `last_write` (the agent's and the person's) - and after a restart the person's `last_write`
    was the last write served, earlier: only a served write moves it now, live as after."""
    home, ws = short_tmp / "h", short_tmp / "ws"
    ws.mkdir()
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        bot = connect(runtime, agent="bot", workspace=str(ws))
        fact = {"content": "the build cache holds 40 GB", "kind": "fact", "scope": "project"}
        assert bot.request("memory.write", fact)["result"]["status"] == "stored"
        served, own = health(person), health(bot)
        time.sleep(0.05)
        secret = "key AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        refused = bot.request(
            "memory.write", {"content": secret, "kind": "fact", "scope": "project"}
        )["result"]
        assert refused["status"] == "refused" and refused["reason_code"] == "secret", refused
        live = health(person)
        mine = live["agents"]["bot"]
        assert mine["writes"] == served["agents"]["bot"]["writes"] == 1, mine
        assert mine["requests"] == served["agents"]["bot"]["requests"] + 2, mine  # health, write
        assert mine["refusals"] == 1 and live["refusals"].get("secret") == 1, live
        assert live["last_write"] == served["last_write"]
        assert health(bot)["last_write"] == own["last_write"]
        person.close()
        bot.close()
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        again = health(person)["last_write"]
        assert again is not None and live["last_write"] - 1000 < again <= live["last_write"]
        person.close()


def test_a_paused_agents_hello_with_its_token_counts_under_that_agent(short_tmp: Path) -> None:
    """A hello with a paused agent's correct token was counted as `agent_paused` overall but not
    in that agent's own refusals; the token proves who it is. A wrong token stays no one's; a
    paused declared name (no token) counts under that name, as all its requests do."""
    home, ws = short_tmp / "h", short_tmp / "ws"
    ws.mkdir()
    with served_in_thread(paths_for(home), confirm_human=lambda _s: None) as runtime:
        person = connect(runtime, role="human")
        token = person.request("agent.add", {"name": "xbot"})["result"]["token"]
        connect(runtime, agent="ybot", workspace=str(ws)).close()  # a declared name
        for name in ("xbot", "ybot"):
            assert "result" in person.request("agent.pause", {"name": name})
        for name, given, refused_as in (
            ("xbot", token, "agent_paused"),
            ("xbot", "cairn_" + "A" * 43, "unauthenticated"),
            ("ybot", None, "agent_paused"),
        ):
            c = RawClient(socket_path(runtime.paths))
            answer = c.hello(agent=name, token=given, workspace=str(ws))
            assert answer["error"]["data"]["error"] == refused_as, answer
            c.close()
        snapshot = health(person)
        assert snapshot["refusals"] == {"agent_paused": 2, "unauthenticated": 1}, snapshot
        agents = snapshot["agents"]
        assert (agents["xbot"]["refusals"], agents["xbot"]["verified"]) == (1, True), agents
        assert (agents["ybot"]["refusals"], agents["ybot"]["verified"]) == (1, False), agents
        person.close()
