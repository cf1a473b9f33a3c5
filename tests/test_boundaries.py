"""The architecture's import rules: `core/` never imports Qt or `desktop/`; `desktop/` never
touches the database layer. Walks every module's AST, so a lazy import inside a function counts."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

FORBIDDEN = {
    "core": {"PySide6", "qasync", "desktop", "shiboken6"},
    "desktop": {"peewee", "playhouse", "sqlite3"},
}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            roots.add(node.args[0].value.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_respects_import_boundary(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        bad = imported_roots(path) & FORBIDDEN[package]
        if bad:
            offenders.append(f"{path.relative_to(ROOT)} imports {', '.join(sorted(bad))}")
    assert not offenders, "import boundary broken:\n" + "\n".join(offenders)


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    """The walker itself must catch imports, or the test above proves nothing."""
    sample = tmp_path / "m.py"
    sample.write_text(
        "def f():\n    from PySide6 import QtCore\n    import importlib\n"
        "    importlib.import_module('sqlite3')\n",
        encoding="utf-8",
    )
    assert {"PySide6", "sqlite3"} <= imported_roots(sample)


# What a `cairn` command that a running Cairn serves needs: the client, the terminal's words and
# the paths - none of the engine. Each of these, imported for every command, made every `cairn`
# command take about 1.2 s to start, 0.5 s without them (until 2026-12-02).
ENGINE = (
    "core.app",
    "core.store",
    "core.database",
    "core.archive",
    "core.policy",
    "core.scanner",
    "core.governance",
    "core.search",
    "core.workspace",
    "peewee",
)


def test_the_command_line_starts_without_the_engine() -> None:
    shown = subprocess.run(
        [sys.executable, "-c", "import sys, core.cli; print('\\n'.join(sorted(sys.modules)))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert [m for m in shown if m in ENGINE or m.startswith("core.scanner.")] == []
    assert "core.client" in shown and "core.terminal" in shown
