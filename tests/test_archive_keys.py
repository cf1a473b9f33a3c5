"""An old store's dedupe keys in its archive: a carriage return or NEL in a key comes in as a line
feed, as every write reads a key since 2026-11-30 - and two keys that then read the same are
settled as schema 2.3 settles them in a live store (`core/old_keys.py`). Real stores, real
archives edited as an old Cairn would have written them."""

from __future__ import annotations

from pathlib import Path

from core.app import Cairn
from core.cli_archive import describe_import
from tests.archive_stores import Rich, write
from tests.test_archive import edited, export, import_, jsonl, jsonl_lines, members


def keys(c: Cairn) -> dict[str, str]:
    rows = c.store.read_db.conn().execute("SELECT id, dedupe_key FROM memory")
    return {str(r[0]): r[1] for r in rows if r[1] is not None}


def test_an_old_stores_dedupe_key_with_a_carriage_return_is_found_again_after_an_import(
    rich: Rich, empty: Cairn, short_tmp: Path
) -> None:
    """An archive of a Cairn before 2026-11-30 may hold a key kept as an agent sent it,
    `wiki\\r`. The import brought it back as it was, so no write could reach it any more: every
    write reads `wiki\\r` as `wiki\\n`, and the agent got a second memory instead of its first
    one updated. Now the key comes in as a write reads it. Two keys of one archive that read the
    same (`deploy\\r` beside `deploy\\n`, `stage\\r` beside `stage\\r\\n`) do not refuse the
    archive: as schema 2.3 decides in a live store, the one already spelt with a line feed takes
    the key, else the live memory changed last; the other keeps its old key as it was, and the
    report says so."""
    ids = rich.ids
    good = short_tmp / "all.zip"
    export(rich.cairn, good)
    spelt = {
        ids["archived"]: "wiki\r",
        ids["ci"]: "deploy\r",
        ids["new"]: "deploy\n",
        ids["a"]: "stage\r",
        ids["b"]: "stage\r\n",
    }

    def change(files: dict[str, bytes]) -> None:
        rows = jsonl(files["memories.jsonl"])
        for r in rows:
            r["dedupe_key"] = spelt.get(r["id"], r["dedupe_key"])
            if r["id"] == ids["a"]:  # changed last: it takes the key neither spells with LF
                r["updated_at"] += 5
        files["memories.jsonl"] = jsonl_lines(rows)

    old = edited(good, short_tmp / "old.zip", change)
    updated = {r["id"]: r["updated_at"] for r in jsonl(members(old)["memories.jsonl"])}
    later, earlier = sorted((ids["a"], ids["b"]), key=lambda i: updated[i], reverse=True)
    assert updated[later] > updated[earlier]

    for dry_run in (True, False):
        report = import_(empty, old, dry_run=dry_run)
        assert report.added == 10 and report.conflicts == (), report
        assert sorted(report.keys_kept, key=lambda i: i["id"]) == sorted(
            [
                {
                    "id": ids["ci"],
                    "reason": f"keeps its dedupe key 'deploy\\r' as it was: {ids['new']} holds "
                    "it as it reads now ('deploy\\n')",
                },
                {
                    "id": earlier,
                    "reason": f"keeps its dedupe key {spelt[earlier]!r} as it was: {later} "
                    "holds it as it reads now ('stage\\n')",
                },
            ],
            key=lambda i: i["id"],
        )
    held = keys(empty)
    assert held[ids["archived"]] == "wiki\n"
    assert (held[ids["new"]], held[ids["ci"]]) == ("deploy\n", "deploy\r")
    assert (held[later], held[earlier]) == ("stage\n", spelt[earlier])
    text = describe_import(report.to_dict())
    assert f"kept its old dedupe key {ids['ci']}: keeps its dedupe key" in text, text

    # the key is found again: a write with it updates the archived memory, no second one
    me = rich.me
    assert (
        write(empty, me, "The wiki moved to docs.example.org", dedupe_key="wiki\r\n")
        == (ids["archived"])
    )
    assert write(empty, me, "Staging is postgres 17", dedupe_key="stage\n") == later
    # and the same archive again changes nothing
    again = import_(empty, old)
    assert (again.added, again.unchanged, again.conflicts) == (0, 10, ()), again
