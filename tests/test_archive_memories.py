"""An import reads an archive's memories a chunk at a time: what it holds while it runs does not
grow with the size of memories.jsonl (a two-year store's import peaked at 476 MB when it held
every memory), and a line that changes after it was verified is refused, never imported
unverified. Real stores, real archives."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from core.app import Cairn
from core.archive_reader import open_archive
from core.errors import InvalidInput
from core.settings import Settings
from core.validation import Limits
from tests.archive_stores import Rich
from tests.test_archive import edited, export, import_, jsonl, members

_FILLER = " ".join(f"retry{n % 50} budget alert gateway" for n in range(75))  # ~2.5 KB


def big_archive(rich: Rich, short_tmp: Path, count: int) -> Path:
    """An archive of `count` memories of about 2.5 KB each, every one with its own text and id
    (made from one memory of `rich`'s export, as another store would have written them)."""
    good = short_tmp / "rich.zip"
    export(rich.cairn, good)
    one = next(
        r
        for r in jsonl(members(good)["memories.jsonl"])
        if r["scope"] == "global" and r["status"] == "active" and r["revision"] == 1
    )

    def change(files: dict[str, bytes]) -> None:
        lines = []
        for n in range(count):
            row = json.loads(json.dumps(one))
            row.update(id=f"m_{n:028x}", content=f"Memory {n}: {_FILLER}", relations=[])
            row["revisions"][0]["content"] = row["content"]
            lines.append(json.dumps(row).encode() + b"\n")
        files["memories.jsonl"] = b"".join(lines)
        files["tombstones.jsonl"] = b""

    return edited(good, short_tmp / "big.zip", change)


@pytest.mark.timeout(300)
def test_an_import_holds_a_chunk_of_the_archive_not_the_whole_of_it(
    rich: Rich, empty: Cairn, short_tmp: Path
) -> None:
    """4,000 memories of 2.5 KB (a 20 MB memories.jsonl): the import's Python objects peak at a
    fraction of that file - a chunk of 500 memories and what it keeps of each (ids, a digest of
    each text): 8.5 MB when written. Until 2026-12-01 it parsed the whole file into memory
    before anything landed, and peaked above the file's size (28 MB)."""
    archive = big_archive(rich, short_tmp, 4000)
    size = len(members(archive)["memories.jsonl"])
    assert size > 18_000_000
    tracemalloc.start()
    try:
        report = import_(empty, archive)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.added == 4000 and report.conflicts == ()
    assert empty.store.read_db.conn().execute("SELECT count(*) FROM memory").fetchone()[0] == 4000
    assert peak < size * 0.6, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"


def test_a_line_that_changes_after_it_was_verified_is_refused_naming_it(
    rich: Rich, short_tmp: Path
) -> None:
    """The memories are read again as the import goes: a line whose bytes differ from the ones
    verified (the file written over while it is imported) stops the import, naming the line -
    it is never parsed as if it had been checked."""
    good = big_archive(rich, short_tmp, 300)

    def rename(old: str, new: str) -> Path:
        def change(files: dict[str, bytes]) -> None:
            files["memories.jsonl"] = files["memories.jsonl"].replace(old.encode(), new.encode())

        return edited(good, short_tmp / f"{new}.zip", change)

    # Two archives of the same size, one word of line 151 apart (stored, not compressed, so
    # every member sits at the same offset in both).
    before, after = rename("Memory 150:", "Memory 150:"), rename("Memory 150:", "MEMORY 150:")
    assert before.stat().st_size == after.stat().st_size
    line = 151
    with open_archive(before, Limits(Settings.defaults())) as archive:
        with open(before, "r+b") as fh:  # the same file, written over in place
            fh.write(after.read_bytes())
        read = archive.memories.read()
        with pytest.raises(InvalidInput) as caught:
            list(read)
    message = caught.value.message
    assert f"memories.jsonl line {line} changed while the archive was imported" in message
    assert "importing the archive again brings the rest" in message
    assert "nothing was imported" not in message  # chunks before it may have landed


def test_a_member_that_changes_after_it_was_verified_is_refused_naming_it(
    rich: Rich, short_tmp: Path
) -> None:
    """A small memories.jsonl is read again whole at once: its change is seen by the zip's own
    check of the member, and said as a change too - not as "nothing was imported"."""
    good = short_tmp / "rich.zip"
    export(rich.cairn, good)

    def rename(new: str) -> Path:
        def change(files: dict[str, bytes]) -> None:
            text = files["memories.jsonl"]
            files["memories.jsonl"] = text.replace(b"Build status", new.encode())

        return edited(good, short_tmp / f"{new}.zip", change)

    before, after = rename("Build status"), rename("Build STATUS")
    with open_archive(before, Limits(Settings.defaults())) as archive:
        with open(before, "r+b") as fh:
            fh.write(after.read_bytes())
        with pytest.raises(InvalidInput) as caught:
            list(archive.memories.read())
    message = caught.value.message
    assert message.startswith("memories.jsonl changed while the archive was imported (Bad CRC")
    assert "nothing was imported" not in message
