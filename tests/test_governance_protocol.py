"""Governance over the real socket: an agent's writes come back stored, pending or refused; a
person's connection (confirmed as the tray will) lists, adopts and rejects; every failure of the
governance methods has the one error shape."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.daemon import Runtime
from core.errors import ErrorCode
from core.runtime import socket_path
from tests.serving import RawClient, paths_for, served_in_thread
from tests.test_protocol import assert_error


@pytest.fixture
def server(short_tmp: Path) -> Iterator[Runtime]:
    with served_in_thread(paths_for(short_tmp / "g"), confirm_human=lambda _s: None) as runtime:
        yield runtime


def connect(runtime: Runtime, **hello: Any) -> RawClient:
    c = RawClient(socket_path(runtime.paths))
    answer = c.hello(**hello)
    assert "result" in answer, answer
    return c


def test_an_agent_proposes_and_a_person_decides_over_the_socket(
    server: Runtime, workspace_dir: Path
) -> None:
    agent = connect(server, agent="helper", workspace=str(workspace_dir))
    person = connect(server, role="human")
    stored = agent.request(
        "memory.write",
        {"content": "the queue is called ledger", "kind": "fact", "scope": "project"},
    )["result"]
    assert stored["status"] == "stored"
    idea = agent.request(
        "memory.write", {"content": "idea: shard the ledger", "kind": "idea", "scope": "project"}
    )["result"]
    assert idea["status"] == "pending" and idea["reason_code"] == "policy"
    secret = agent.request(
        "memory.write",
        {"content": "key AKIAZ7QK3MWN5PXR2TLY", "kind": "fact", "scope": "project"},
    )["result"]
    assert (
        secret
        == {
            "status": "refused",
            "reason_code": "secret",
            "reason": secret["reason"],
        }
        and "AKIAZ7QK3MWN5PXR2TLY" not in secret["reason"]
    )
    mine = agent.request("policy.get")["result"]["for_this_agent"]
    assert mine["kinds"]["idea"] == "ask" and mine["verified"] is False

    listed = person.request("review.list")["result"]
    assert [i["id"] for i in listed["items"]] == [idea["suggestion_id"]] and listed["total"] == 1
    adopted = person.request(
        "review.adopt", {"id": idea["suggestion_id"], "edits": {"kind": "procedure"}}
    )["result"]
    assert adopted["decision"] == "adopted" and adopted["edited"] == ["kind"]
    got = agent.request("memory.get", {"id": adopted["memory_id"]})["result"]
    assert got["kind"] == "procedure" and got["author_tier"] == "human"
    # the adopted memory is no longer the agent's alone: its change waits
    change = agent.request(
        "memory.update",
        {"id": adopted["memory_id"], "if_revision": 1, "content": "idea: shard it twice"},
    )["result"]
    assert change["status"] == "pending" and change["reason_code"] == "not_owner"
    agent.close()
    person.close()


def test_every_governance_failure_has_the_one_shape(server: Runtime, workspace_dir: Path) -> None:
    agent = connect(server, agent="helper", workspace=str(workspace_dir))
    person = connect(server, role="human")
    mid = agent.request(
        "memory.write", {"content": "the port is 8080", "kind": "fact", "scope": "project"}
    )["result"]["id"]
    other = connect(server, agent="other", workspace=str(workspace_dir))
    sid = other.request(
        "memory.update", {"id": mid, "if_revision": 1, "content": "the port is 9090"}
    )["result"]["suggestion_id"]
    agent.request("memory.update", {"id": mid, "if_revision": 1, "content": "the port is 8081"})
    for method, params in (
        ("review.list", {}),
        ("review.adopt", {"id": sid}),
        ("policy.set", {"setting": "paused", "value": True}),
        ("scanner.allowed", {}),
    ):
        assert_error(agent.request(method, params), ErrorCode.FORBIDDEN, "humans decide")
    assert_error(agent.request("memory.get", {"id": mid, "raw": True}), ErrorCode.FORBIDDEN, "raw")
    cases: list[tuple[str, dict[str, Any], ErrorCode, str]] = [
        ("review.adopt", {"id": "s_nope"}, ErrorCode.NOT_FOUND, "not found"),
        ("review.adopt", {"id": sid}, ErrorCode.CONFLICT, "changed since the proposal"),
        ("review.adopt", {"id": sid, "edits": "x"}, ErrorCode.INVALID_PARAMS, "edits"),
        ("review.adopt", {"id": sid, "edits": {"agent": "me"}}, ErrorCode.INVALID_PARAMS, "agent"),
        ("review.adopt", {"id": sid, "action": "burn"}, ErrorCode.INVALID_PARAMS, "action"),
        ("review.reject", {}, ErrorCode.INVALID_PARAMS, "'id'"),
        ("review.reject_many", {"ids": []}, ErrorCode.INVALID_PARAMS, "between 1 and 500"),
        ("policy.set", {"setting": "kinds.idea", "value": "maybe"}, ErrorCode.INVALID_PARAMS, ""),
        ("policy.set", {"setting": "paused", "value": "yes"}, ErrorCode.INVALID_PARAMS, "true"),
        ("policy.set", {"setting": "kinds.rumour", "value": "auto"}, ErrorCode.INVALID_PARAMS, ""),
        ("scanner.allow", {"fingerprint": "zz", "rule": "jwt"}, ErrorCode.INVALID_PARAMS, ""),
        ("scanner.unallow", {"fingerprint": "0" * 16}, ErrorCode.NOT_FOUND, ""),
    ]
    for method, params, code, needle in cases:
        assert_error(person.request(method, params), code, needle)
    conflict = person.request("review.adopt", {"id": sid})["error"]
    assert conflict["data"]["current_revision"] == 2
    done = person.request("review.adopt", {"id": sid, "if_revision": 2})["result"]
    assert done["revision"] == 3
    for c in (agent, other, person):
        c.close()


# -- found by a hostile tester, 2026-11-30 -----------------------------------------------------

GITHUB_TOKEN = "ghp_Z8b2kQ9xLm4Pw7Rt1Vy3Nc6Hd0Fg5Js2Ak9Q"


def test_a_hello_holding_a_secret_is_refused_and_records_nothing(
    server: Runtime, short_tmp: Path, workspace_dir: Path
) -> None:
    named = short_tmp / GITHUB_TOKEN
    named.mkdir()
    lower = GITHUB_TOKEN.lower()  # agent names are lower-case; the rule still matches
    for hello, field in (
        ({"agent": lower}, "agent"),
        ({"agent": lower, "enroll": True}, "agent"),
        ({"agent": "helper", "session": f"s:{GITHUB_TOKEN}"}, "session"),
        ({"agent": "helper", "workspace": str(named)}, "workspace"),
        ({"role": "human", "workspace": str(named)}, "workspace"),
    ):
        c = RawClient(socket_path(server.paths))
        answer = c.hello(**hello)
        c.close()
        assert "error" in answer, (hello, answer)
        error = answer["error"]
        assert error["data"]["error"] == "invalid_params", error
        assert error["data"]["field"] == field and error["data"]["reason_code"] == "secret"
        assert "github-token" in error["message"]
        assert GITHUB_TOKEN.lower() not in json.dumps(answer).lower()
    person = connect(server, role="human")
    names = {a["name"] for a in person.request("agent.list")["result"]["agents"]}
    person.close()
    assert lower not in names and "helper" not in names
    assert server.cairn is not None
    server.cairn.store.checkpoint("TRUNCATE")
    assert GITHUB_TOKEN.lower().encode() not in server.cairn.store.path.read_bytes().lower()


def test_a_self_enrolled_token_does_not_unlock_a_persons_override(
    server: Runtime, workspace_dir: Path
) -> None:
    """A person prepared `[agents.ops-bot] scopes = { global = "auto" }` for an agent not yet
    registered; any same-user program enrolling the name must not get that grant."""
    person = connect(server, role="human")
    for target in ("agents.ops-bot.scopes.global", "agents.vetted.scopes.global"):
        assert "result" in person.request("policy.set", {"setting": target, "value": "auto"})
    squatter = RawClient(socket_path(server.paths))
    hello = squatter.hello("ops-bot", enroll=True, workspace=str(workspace_dir))["result"]
    assert hello["verified"] is True
    wide = {"content": "every repo deploys with make ship", "kind": "fact", "scope": "global"}
    answer = squatter.request("memory.write", wide)["result"]
    assert answer["status"] == "pending" and answer["reason_code"] == "policy", answer
    mine = squatter.request("policy.get")["result"]["for_this_agent"]
    assert mine["scopes"]["global"] == "ask" and mine["self_enrolled"] is True
    squatter.close()
    # an agent a person registered gets what the person allowed
    token = person.request("agent.add", {"name": "vetted"})["result"]["token"]
    vetted = connect(server, agent="vetted", token=token, workspace=str(workspace_dir))
    answer = vetted.request("memory.write", {**wide, "content": "all repos use trunk"})["result"]
    assert answer["status"] == "stored", answer
    vetted.close()
    # so does the enrolled name once a person issues its token (revoke, then add)
    assert "result" in person.request("agent.revoke", {"name": "ops-bot"})
    reissued = person.request("agent.add", {"name": "ops-bot"})["result"]
    assert reissued["created_by"] == "human"
    ops = connect(server, agent="ops-bot", token=reissued["token"], workspace=str(workspace_dir))
    assert ops.request("memory.write", wide)["result"]["status"] == "stored"
    ops.close()
    person.close()


def test_a_relative_archive_path_is_refused_not_taken_from_cairns_own_folder(
    server: Runtime, short_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`archive.export {out: "mine.zip"}` wrote the archive into the folder Cairn was started
    from - not the caller's, which the socket cannot know - and `archive.import` read from it."""
    cairns_own = short_tmp / "cairn-cwd"
    cairns_own.mkdir()
    monkeypatch.chdir(cairns_own)
    person = connect(server, role="human")
    for method, params in (
        ("archive.export", {"out": "mine.zip"}),
        ("archive.import", {"path": "mine.zip"}),
        ("archive.import", {"path": "mine.zip", "dry_run": True}),
    ):
        reply = person.request(method, params)
        assert_error(reply, ErrorCode.INVALID_PARAMS, "not an absolute path")
        assert "'mine.zip'" in reply["error"]["message"]
    assert list(cairns_own.iterdir()) == []
    # an absolute path, and one from the home folder, still work
    out = short_tmp / "mine.zip"
    assert person.request("archive.export", {"out": str(out)})["result"]["counts"]
    assert person.request("archive.import", {"path": str(out), "dry_run": True})["result"]
    person.close()


def test_a_person_asking_for_the_policy_hears_that_the_file_is_not_in_effect(
    server: Runtime,
) -> None:
    """`cairn policy show` printed the policy in effect and the file's path, and nothing said
    that the file - which the person had edited - was invalid and ignored."""
    cairn = server.cairn
    assert cairn is not None
    path = cairn.policy.path
    path.write_text(path.read_text(encoding="utf-8") + "\n[[broken\n", encoding="utf-8")
    cairn.policy.reload()
    person = connect(server, role="human")
    answer = person.request("policy.get")["result"]
    assert "not valid TOML" in answer["file_warning"]
    agent = connect(server, agent="helper")
    assert "file_warning" not in agent.request("policy.get")["result"]
    person.close()
    agent.close()


def test_an_updates_reason_is_held_to_the_note_limit(server: Runtime, workspace_dir: Path) -> None:
    """memory.update took a reason of any length - 900,000 characters went into the memory's
    history, shown to the person and to agents - while supersede, forget, contradict and
    identity.propose refuse one over 1,000 characters. It is too_large now, naming the field,
    and the memory is left as it was."""
    agent = connect(server, agent="helper", workspace=str(workspace_dir))
    stored = agent.request(
        "memory.write", {"content": "the build uses make", "kind": "fact", "scope": "project"}
    )["result"]
    for reason in ("r" * 1001, "x" * 900_000):
        change = {"id": stored["id"], "if_revision": 1, "importance": 4, "reason": reason}
        refused = agent.request("memory.update", change)
        assert_error(refused, ErrorCode.TOO_LARGE, f"reason is {len(reason)} characters")
        assert refused["error"]["data"]["field"] == "reason"
    got = agent.request("memory.get", {"id": stored["id"], "history": True})["result"]
    assert got["revision"] == 1 and got["importance"] == 3
    assert [r.get("reason") for r in got["revisions"]] == [None]
    within = {"id": stored["id"], "if_revision": 1, "importance": 4, "reason": "r" * 1000}
    assert agent.request("memory.update", within)["result"]["revision"] == 2
    agent.close()


def test_a_json_lines_project_line_with_no_workspace_anywhere_says_what_to_give(
    server: Runtime, short_tmp: Path
) -> None:
    """`archive.import` of a JSON-lines file with a project line, on a person's connection
    (which binds no workspace) with no `workspace` parameter: the line failed with the write
    path's advice "give a workspace directory when connecting" - which a person's archive
    connection never does. It now says to pass `workspace` to archive.import or to give the
    line its own; the other lines land."""
    lines = short_tmp / "mixed.jsonl"
    lines.write_text(
        '{"content": "a project line", "kind": "fact", "scope": "project"}\n'
        '{"content": "a user line", "kind": "fact", "scope": "user"}\n',
        encoding="utf-8",
    )
    person = connect(server, role="human")
    for dry_run in (True, False):
        report = person.request("archive.import", {"path": str(lines), "dry_run": dry_run})
        first, second = report["result"]["lines"]
        assert first["status"] == "error" and first["error"] == "scope_denied", first
        assert first["message"] == (
            "scope 'project' needs a workspace, and this import has none: pass `workspace` "
            "(a directory) to archive.import - `cairn import` passes the folder it runs in - "
            "or give the line its own `workspace`"
        ), first
        assert second["status"] == "stored", second
    person.close()


def two_ideas_and_feedback(agent: RawClient) -> tuple[list[str], str]:
    """An agent's two ideas (waiting: the policy asks) and its feedback on a fact it stored
    (waiting: feedback); their proposals' ids."""
    ideas = [
        agent.request(
            "memory.write",
            {"content": f"an idea number {i} about caching", "kind": "idea", "scope": "project"},
        )["result"]["suggestion_id"]
        for i in range(2)
    ]
    fact = agent.request(
        "memory.write",
        {
            "content": "The staging database listens on port 5433",
            "kind": "fact",
            "scope": "project",
        },
    )["result"]
    assert fact["status"] == "stored", fact
    answer = agent.request("memory.feedback", {"id": fact["id"], "verdict": "wrong"})["result"]
    return ideas, str(answer["suggestion_id"])


def test_review_list_narrows_to_a_kind_or_a_reason(server: Runtime, short_tmp: Path) -> None:
    """`review.list` took only `agent`; the window's kind and reason filters had no protocol
    counterpart. It takes `kind` (as a proposal is filed: its kind, its memory's, or its
    operation) and `reason` (a reason code) now, counts only those, and refuses unknown ones."""
    agent = connect(server, agent="alpha", workspace=str(short_tmp))
    ideas, _ = two_ideas_and_feedback(agent)
    person = connect(server, role="human")
    listed = person.request("review.list", {"kind": "fact"})["result"]
    (item,) = listed["items"]
    assert listed["total"] == 1 and item["op"] == "feedback", listed
    listed = person.request("review.list", {"reason": "policy", "kind": "idea"})["result"]
    assert sorted(i["id"] for i in listed["items"]) == sorted(ideas), listed
    assert listed["total"] == 2, listed
    for asked, field in (({"kind": "fcat"}, "kind"), ({"reason": "because"}, "reason")):
        answer = person.request("review.list", asked)
        assert answer["error"]["data"]["error"] == "invalid_params", answer
        assert f"{field} must be one of" in answer["error"]["message"], answer
    agent.close()
    person.close()
