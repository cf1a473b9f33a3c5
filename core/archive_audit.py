"""Reading the audit log for an export: the rotated audit files read as they are taken (a file
that cannot be read is said as such), each seq once, and the seqs missing from the log."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from core.errors import IOFault

SHOWN = 1000  # ranges of lines or seqs a manifest lists (their count is always whole)


def ranges(numbers: list[int]) -> list[list[int]]:
    """Ascending numbers as [first, last] runs: 2, 3, 4, 7 -> [[2, 4], [7, 7]]."""
    out: list[list[int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


@contextlib.contextmanager
def reading(path: Path, what: str) -> Iterator[None]:
    """Reads of `path` in this block that fail are said as such (IOFault), naming the file -
    not as the archive's write failing, which an OSError inside its block means (until
    2026-12-01 a rotated file that could not be read was "could not write the archive")."""
    try:
        yield
    except OSError as e:
        raise IOFault(
            f"cannot read {what} {path}: {(e.strerror or str(e)).lower()}; no archive was "
            "written. Move the file away (or fix its permissions) and export again",
            data={"path": str(path)},
        ) from e


def read_on(path: Path, events: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`events`, read from `path` as they are taken (`reading` for each)."""
    while True:
        with reading(path, "the rotated audit file"):
            event = next(events, None)
        if event is None:
            return
        yield event


def _seq(event: Mapping[str, Any]) -> int:
    return int(event["seq"])


def last_of_each_seq(events: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Events ascending by seq, each seq once: the last of those that share one (a later file,
    or a later line of one file, wins - as it did when they were gathered by seq)."""
    held: dict[str, Any] | None = None
    for event in events:
        if held is not None and held["seq"] != event["seq"]:
            yield held
        held = event
    if held is not None:
        yield held


class Gaps:
    """The seq numbers from 1 to the last one seen that were not seen (seqs come ascending):
    how many, and the first `SHOWN` runs of them."""

    def __init__(self) -> None:
        self.count = 0
        self.runs: list[list[int]] = []
        self._next = 1

    def see(self, seq: int) -> None:
        if seq > self._next:
            self.count += seq - self._next
            if len(self.runs) < SHOWN:
                self.runs.append([self._next, seq - 1])
        self._next = max(self._next, seq + 1)
