"""Counts said in English, for every surface that writes sentences (the CLI, the MCP tools'
text, health warnings, error messages): `1 memory`, `3 memories`."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """`1 memory`, `3 memories` (give `many` when adding an s is wrong)."""
    return f"{count} {noun}" if count == 1 else f"{count} {many or noun + 's'}"
