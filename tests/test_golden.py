"""Cairn's own golden retrieval set (tests/data/golden_set.json) with floors, so retrieval quality
cannot silently regress even where the public sets in ../shared/data are absent."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from core.app import Cairn
from core.model import Caller, Scope, Surface
from core.requests import WriteRequest
from core.search import Presence, SearchRequest
from tests.conftest import ROOT

GOLDEN = json.loads((ROOT / "tests" / "data" / "golden_set.json").read_text(encoding="utf-8"))


@pytest.fixture
def golden(cairn: Cairn, short_tmp: Path) -> tuple[Cairn, dict[str, str], dict[str, Caller]]:
    callers: dict[str, Caller] = {}
    for name in ("web", "api", "other"):
        directory = short_tmp / name
        directory.mkdir()
        ws = cairn.workspaces.resolve(str(directory))
        callers[name] = Caller(Surface.AGENT, agent="golden", verified=True, workspace_id=ws.id)
    ids: dict[str, str] = {}
    for m in GOLDEN["memories"]:
        caller = callers[m.get("ws", "web")]
        result = cairn.memories.write(
            caller, WriteRequest(content=m["content"], kind=m["kind"], scope=Scope(m["scope"]))
        )
        assert result.id is not None
        ids[m["key"]] = result.id
    return cairn, ids, callers


def test_golden_set_floors(golden: tuple[Cairn, dict[str, str], dict[str, Caller]]) -> None:
    cairn, ids, callers = golden
    by_slice: dict[str, list[tuple[int | None, bool]]] = defaultdict(list)
    violations: list[str] = []
    none_correct = none_total = 0
    for case in GOLDEN["cases"]:
        result = cairn.search.search(
            callers[case["ws"]], SearchRequest(query=case["query"], limit=5)
        )
        returned = [h.memory.id for h in result.hits]
        violations.extend(
            f"{case['query']!r} returned {key}"
            for key in case.get("forbidden", [])
            if ids[key] in returned
        )
        relevant = {ids[k] for k in case["relevant"]}
        if not relevant:
            none_total += 1
            none_correct += result.presence is Presence.NONE or not result.hits
            continue
        rank = next((i for i, mid in enumerate(returned) if mid in relevant), None)
        by_slice[case["slice"]].append((rank, result.presence is not Presence.NONE))
    assert not violations, violations
    answered = [r for rows in by_slice.values() for r in rows]
    success5 = sum(rank is not None for rank, _ in answered) / len(answered)
    p1 = sum(rank == 0 for rank, _ in answered) / len(answered)
    mrr = sum(1 / (rank + 1) for rank, _ in answered if rank is not None) / len(answered)
    zh = by_slice["zh"]
    zh_success = sum(rank is not None for rank, _ in zh) / len(zh)
    exact_p1 = sum(rank == 0 for rank, _ in by_slice["exact"]) / len(by_slice["exact"])
    found_presence = sum(present for _, present in answered) / len(answered)
    report = (
        f"success@5 {success5:.2f} P@1 {p1:.2f} MRR {mrr:.2f} zh success@5 {zh_success:.2f} "
        f"exact P@1 {exact_p1:.2f} presence on answerable {found_presence:.2f} "
        f"no-answer as none {none_correct}/{none_total}"
    )
    print(report)
    assert success5 >= 0.95, report
    assert p1 >= 0.85, report
    assert mrr >= 0.88, report
    assert zh_success >= 0.9, report
    assert exact_p1 == 1.0, report
    assert found_presence >= 0.85, report
    assert none_correct >= none_total - 1, report
