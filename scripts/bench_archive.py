"""Archive and backup benchmark: export a store of 10k memories with 3 revisions each, import the
archive into an empty store, check that a round trip gives the same bytes, and take backups -
all through the public service API.

    .venv/bin/python scripts/bench_archive.py [--memories 10000] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TypeVar

from benchlib import scratch_cairn

from core.app import Cairn
from core.model import Caller, Scope, Surface, WriteResult, WriteStatus
from core.requests import UpdateRequest, WriteRequest
from core.writer import WriteTx

T = TypeVar("T")
_WORDS = (
    "build deploy staging service cache port retry timeout worker queue schema column index "
    "token session tenant invoice billing search ingest gateway config release branch review "
    "owner runs uses after before when never always restart pin version flag test lint docs"
).split()
_CHUNK = 1000


def text(rng: random.Random, n: int) -> str:
    """18 words: 17 drawn from a small vocabulary, and a unique tag so no two are duplicates."""
    return " ".join(rng.choice(_WORDS) for _ in range(17)) + f" n{n}"


def check(results: list[WriteResult]) -> None:
    bad = [r for r in results if r.status is not WriteStatus.STORED]
    if bad:
        raise SystemExit(f"a write did not land: {bad[0]}")


def build(cairn: Cairn, n: int, workdir: Path) -> None:
    """`n` memories, two thirds project memories (over three workspaces), the rest user and
    global; each written, then reworded, then re-tagged: 3 revisions, 3 audit events."""
    rng = random.Random(11)
    workspaces = []
    for name in ("billing", "search", "mobile"):
        (workdir / name).mkdir(parents=True, exist_ok=True)
        workspaces.append(cairn.workspaces.resolve(str(workdir / name)).id)
    batches: dict[tuple[Scope, str | None], list[WriteRequest]] = {}
    for i in range(n):
        if i % 3 == 2:
            scope, ws = (Scope.USER if i % 2 else Scope.GLOBAL), None
        else:
            scope, ws = Scope.PROJECT, workspaces[i % len(workspaces)]
        req = WriteRequest(
            content=text(rng, i),
            kind=rng.choice(["fact", "convention", "procedure", "pitfall"]),
            scope=scope,
            tags=(rng.choice(["ops", "db", "ci", "style"]),),
        )
        batches.setdefault((scope, ws), []).append(req)
    ids: list[str] = []
    for (_, ws), reqs in batches.items():
        me = Caller(Surface.HUMAN, workspace_id=ws)
        for start in range(0, len(reqs), _CHUNK):
            written: list[WriteResult] = []
            for result in cairn.memories.write_many(me, reqs[start : start + _CHUNK]):
                if not isinstance(result, WriteResult):
                    raise SystemExit(f"a write failed: {result}")
                written.append(result)
            check(written)
            ids.extend(r.id for r in written if r.id is not None)
    person = Caller.human()
    for revision in (1, 2):
        for start in range(0, len(ids), _CHUNK):
            changes = [
                UpdateRequest(id=mid, if_revision=revision, content=text(rng, n + i))
                if revision == 1
                else UpdateRequest(id=mid, if_revision=revision, tags=("ops", "reviewed"))
                for i, mid in enumerate(ids[start : start + _CHUNK], start)
            ]

            def job(tx: WriteTx, changes: list[UpdateRequest] = changes) -> list[WriteResult]:
                return [cairn.memories.update_in(tx, person, c) for c in changes]

            check(cairn.store.writer.run(job))


def timed(fn: Callable[[], T], runs: int) -> tuple[float, list[float], T]:
    """Median seconds of `runs` calls, every sample, and the last call's result."""
    samples: list[float] = []
    result: T | None = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
    assert result is not None
    return statistics.median(samples), samples, result


def member_sha256(archive: Path, name: str) -> str:
    with zipfile.ZipFile(archive) as z:
        return hashlib.sha256(z.read(name)).hexdigest()


def table_hash(cairn: Cairn, sql: str) -> str:
    """sha256 over the rows a query gives, as the store holds them."""
    digest = hashlib.sha256()
    for row in cairn.store.read_db.conn().execute(sql):
        digest.update(json.dumps(list(row), ensure_ascii=False).encode())
    return digest.hexdigest()


_MEMORY_ROWS = (
    "SELECT id, revision, content, summary, kind, scope, workspace_id, session_id, tags, "
    "importance, pinned, status, tier, agent, created_at, updated_at, content_hash FROM memory "
    "ORDER BY id"
)
_REVISION_ROWS = (
    "SELECT memory_id, revision, content, kind, scope, workspace_id, tags, status, tier, actor, "
    "action, created_at FROM revision ORDER BY memory_id, revision"
)


def mb(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    n: int = args.memories
    runs: int = args.runs
    person = Caller.human()
    results: dict[str, object] = {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "memories": n,
    }
    print(
        f"Python {results['python']}, SQLite {results['sqlite']}, {results['machine']}, "
        f"{results['cpus']} CPUs"
    )
    with tempfile.TemporaryDirectory(prefix="cba", dir="/tmp") as tmp, scratch_cairn() as source:
        work = Path(tmp)
        t0 = time.perf_counter()
        build(source, n, work / "projects")
        conn = source.store.read_db.conn()
        revisions = int(conn.execute("SELECT count(*) FROM revision").fetchone()[0])
        events = int(conn.execute("SELECT count(*) FROM audit").fetchone()[0])
        wal = Path(f"{source.store.path}-wal")
        db_size = source.store.path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        print(
            f"store: {n:,} memories, {revisions:,} revisions, {events:,} audit events, "
            f"database {mb(db_size)} with its WAL (built in {time.perf_counter() - t0:.1f} s)"
        )

        archive = work / "all.zip"
        median, samples, manifest = timed(lambda: source.archive.export(person, archive), runs)
        size = archive.stat().st_size
        memories_jsonl = manifest.files["memories.jsonl"]["bytes"]
        print(
            f"export: median {median:.2f} s of {runs} ({', '.join(f'{s:.2f}' for s in samples)})"
            f"  {n / median:,.0f} memories/s, {revisions / median:,.0f} revisions/s"
        )
        print(f"  archive {mb(size)} (memories.jsonl {mb(memories_jsonl)} uncompressed)")
        results.update(export_s=median, export_samples=samples, archive_bytes=size)

        targets: list[Cairn] = []
        import_samples: list[float] = []
        with ExitStack() as stack:
            for target in [stack.enter_context(scratch_cairn()) for _ in range(runs)]:
                t0 = time.perf_counter()
                report = target.archive.import_(person, archive)
                import_samples.append(time.perf_counter() - t0)
                if report.to_dict()["added"] != n:
                    raise SystemExit(f"the import added {report.to_dict()['added']}, not {n}")
                targets.append(target)
            median = statistics.median(import_samples)
            print(
                f"import into an empty store: median {median:.2f} s of {len(import_samples)} "
                f"({', '.join(f'{s:.2f}' for s in import_samples)})"
                f"  {n / median:,.0f} memories/s, {revisions / median:,.0f} revisions/s"
            )
            results.update(import_s=median, import_samples=import_samples)

            again = work / "again.zip"
            targets[0].archive.export(person, again)
            first = member_sha256(archive, "memories.jsonl")
            second = member_sha256(again, "memories.jsonl")
            same_file = first == second
            same_memories = table_hash(source, _MEMORY_ROWS) == table_hash(targets[0], _MEMORY_ROWS)
            same_revisions = table_hash(source, _REVISION_ROWS) == table_hash(
                targets[0], _REVISION_ROWS
            )
            print(
                "round trip export -> import -> export: memories.jsonl sha256 "
                f"{first[:16]}... / {second[:16]}... {'identical' if same_file else 'DIFFERENT'}; "
                f"memory rows {'identical' if same_memories else 'DIFFERENT'}, "
                f"revision rows {'identical' if same_revisions else 'DIFFERENT'}"
            )
            results.update(
                round_trip_identical=same_file and same_memories and same_revisions,
            )

        median, samples, info = timed(lambda: source.backups.backup("manual"), runs)
        print(
            f"backup (manual): median {median:.2f} s of {runs} "
            f"({', '.join(f'{s:.2f}' for s in samples)}), {mb(info.size)} each"
        )
        results.update(backup_s=median, backup_samples=samples, backup_bytes=info.size)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0 if results["round_trip_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
