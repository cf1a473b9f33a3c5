"""Smoke test of scripts/eval.py: a small slice of every public set, run as its own process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

DATA = ROOT / ".." / "shared" / "data"


def _rates(node: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """Every float in the report outside the timing block, with where it was found."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key != "timing":
                yield from _rates(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _rates(value, f"{path}[{i}]")
    elif isinstance(node, float):
        yield path, node


def test_eval_script_reports_sane_figures(short_tmp: Path) -> None:
    if not DATA.is_dir():
        pytest.skip("../shared/data is absent")
    out = short_tmp / "eval.json"
    proc = subprocess.run(
        [
            sys.executable,
            "scripts/eval.py",
            "--only",
            "locomo,memoree,zh",
            "--limit-locomo",
            "8",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))

    digest = report["engine_config"]
    assert isinstance(digest, str)
    assert len(digest) == 12
    assert proc.stdout.startswith(f"engine config {digest}\n")

    rates = list(_rates(report))
    assert rates
    for where, value in rates:
        assert 0.0 <= value <= 1.0, f"{where} = {value}"

    locomo = report["locomo"]["splits"]
    assert set(locomo) == {"dev", "heldout", "all"}
    assert locomo["all"]["overall"]["n"] == (
        locomo["dev"]["overall"]["n"] + locomo["heldout"]["overall"]["n"]
    )
    assert locomo["all"]["overall"]["n"] > 0

    memoree = report["memoree"]["splits"]["all"]
    assert memoree["overall"]["n"] > 0
    # Another project's memory never reaches a search that did not ask to broaden.
    assert memoree["forbidden"]["scope_leaks"] == 0
    scope_cases = [r for r in report["memoree"]["per_case"] if r["slice"] == "ambient_scope"]
    assert scope_cases
    assert all(not r["forbidden_returned"] for r in scope_cases)
    assert isinstance(memoree["forbidden"]["violations"], int)

    zh = report["zh"]["splits"]["all"]
    assert zh["human/plain"]["n"] == 17
    assert zh["human/plain"]["none_n"] == 3
    assert zh["hard-12/plain"]["n"] == 14


def test_spelling_eval_counts_rewrites_and_fixes(short_tmp: Path) -> None:
    """scripts/eval_spelling.py measures the spelling step on LoCoMo's own words."""
    if not DATA.is_dir():
        pytest.skip("../shared/data is absent")
    out = short_tmp / "spelling.json"
    proc = subprocess.run(
        [sys.executable, "scripts/eval_spelling.py", "--typo-words", "20", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert proc.stdout.startswith(f"engine config {report['engine_config']}\n")
    assert len(report["stores"]) == 3
    for name, store in report["stores"].items():
        assert 0 <= store["rewritten"] <= store["correct_words"], name
        assert store["correct_words"] > 0, name
        for kind, typo in store["typos"].items():
            assert 0 <= typo["fixed"] <= typo["n"], (name, kind)
        # each stored word that is misspelled has one of its typos counted, most of them fixed
        assert sum(t["fixed"] for t in store["typos"].values()) > 20, name


@pytest.mark.parametrize("script", ["eval.py", "eval_similarity.py", "eval_spelling.py"])
def test_an_eval_without_its_data_says_where_it_looked_in_one_line(
    short_tmp: Path, script: str
) -> None:
    """Without ../shared/data beside the checkout eval_similarity.py and eval_spelling.py ended
    in a FileNotFoundError (or DataError) traceback, and eval.py exited 2, the status of a
    mistyped option. Each now names the folder, or the file missing in it, and --data, exit 66
    (no such input)."""
    empty = short_tmp / "data"
    empty.mkdir()
    for data, named in ((short_tmp / "absent", "absent"), (empty, "data/")):
        proc = subprocess.run(
            [sys.executable, f"scripts/{script}", "--data", str(data)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        said = [line for line in proc.stderr.splitlines() if not line.endswith(" ...")]
        assert proc.returncode == 66, proc.stderr
        assert len(said) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert named in said[0] and "--data" in said[0], said
        assert proc.stdout == ""
