"""The documentation describes what exists: every setting is documented, the tier table in
docs/data-model.md is the one the code uses."""

from __future__ import annotations

from core.settings import KNOBS, documented_names, render_reference
from core.tiers import render_table
from tests.conftest import ROOT


def test_every_setting_is_documented() -> None:
    text = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    missing = {k.name for k in KNOBS} - documented_names(text)
    assert not missing, f"settings missing from docs/settings.md: {sorted(missing)}"
    assert render_reference() in text, "run scripts/render_settings_docs.py"


def test_tier_table_in_docs_matches_the_code() -> None:
    text = (ROOT / "docs" / "data-model.md").read_text(encoding="utf-8")
    assert render_table() in text, "docs/data-model.md must contain the table from core.tiers"
