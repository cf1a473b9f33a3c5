"""Store benchmark: acknowledged single writes per second, writes into a store whose texts share
one vocabulary, writes that wait for review (with 200, 1000 and 5000 proposals waiting), bulk
rows per second, and get/list latency (median, p95)
at 10k and 100k memories, all through the public service API.

    .venv/bin/python scripts/bench_store.py [--sizes 10000 100000] [--queues 200 1000 5000]
        [--bulk-only] [--json FILE]

`--bulk-only` times just the bulk insert (no single writes, read latencies or raw ceiling).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sqlite3
import sys
import time

from benchlib import fmt, latency, scratch_cairn, sentence

from core.app import Cairn
from core.model import Caller, ListFilter, Scope, Surface
from core.policy import Mode, all_auto, with_mode
from core.requests import WriteRequest
from core.settings import Settings
from core.validation import Limits


def single_writes(n: int, synchronous: str, texts: list[str] | None = None) -> float:
    """Acknowledged writes per second of one agent writing `texts` (default: `n` generated
    sentences) one by one, each through the governed path (scanner, near-duplicate check)."""
    settings = Settings.defaults().with_values(store__synchronous=synchronous)
    rng = random.Random(1)
    agent = Caller(Surface.AGENT, agent="bench", verified=True)
    with scratch_cairn(settings) as cairn:
        texts = texts if texts is not None else [sentence(rng) for _ in range(n)]
        n = len(texts)
        t0 = time.perf_counter()
        for text in texts:
            cairn.memories.write(agent, WriteRequest(content=text, kind="fact", scope=Scope.USER))
        return n / (time.perf_counter() - t0)


_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def proposal_writes(queue_sizes: list[int], n: int = 200) -> dict[int, dict[str, float]]:
    """Milliseconds per agent write that waits for review, with each of `queue_sizes`
    proposals already waiting (each new one is compared with every waiting proposal of its
    scope, to count a re-observation instead of queueing the same idea twice)."""
    settings = Settings.defaults().with_values(review__max_items=max(queue_sizes) + n)
    policy = with_mode(all_auto(Limits(settings).kinds), "kinds.idea", Mode.ASK)
    rng = random.Random(3)
    agent = Caller(Surface.AGENT, agent="bench", verified=True)

    def propose() -> None:
        # The generated sentences alone are near-duplicates of one another (most would be
        # counted as seen again, not queued): four made-up words make most an idea of its own.
        made_up = " ".join("".join(rng.choices(_SYLLABLES, k=3)) for _ in range(4))
        text = f"{sentence(rng)}, for {made_up}"
        cairn.memories.write(agent, WriteRequest(content=text, kind="idea", scope=Scope.USER))

    out = {}
    with scratch_cairn(settings, policy=policy) as cairn:
        # Stored memories first, so that words weigh by their rarity as in a store in use.
        facts = [
            WriteRequest(content=sentence(rng), kind="fact", scope=Scope.USER) for _ in range(2000)
        ]
        cairn.memories.write_many(Caller.human(), facts)
        for size in sorted(queue_sizes):
            while cairn.review.count() < size:
                propose()
            out[size] = latency(propose, n)
    return out


def shared_vocabulary_writes(stored: int = 20_000, n: int = 200) -> dict[str, float]:
    """Milliseconds per agent write into a store of `stored` memories whose texts all come
    from one small vocabulary (each word in about half of them), each with a number of its
    own: the near-duplicate check must not rank every memory holding a common word."""
    rng = random.Random(11)
    words = (
        "alpha beta gamma delta epsilon theta kappa lambda omega queue cache deploy tenant "
        "invoice billing database gateway staging retry merchant latency port"
    ).split()

    def text(label: str, i: int) -> str:
        return f"memory {label} {i}: " + " ".join(rng.choice(words) for _ in range(15))

    agent = Caller(Surface.AGENT, agent="bench", verified=True)
    with scratch_cairn() as cairn:
        for start in range(0, stored, 5000):
            cairn.memories.write_many(
                Caller.human(),
                [
                    WriteRequest(content=text("number", i), kind="fact", scope=Scope.USER)
                    for i in range(start, min(stored, start + 5000))
                ],
            )
        texts = iter([text("extra", i) for i in range(n)])
        return latency(
            lambda: cairn.memories.write(
                agent, WriteRequest(content=next(texts), kind="fact", scope=Scope.USER)
            ),
            n,
        )


def real_text() -> list[str] | None:
    """LoCoMo's conversation turns from ../shared/data, or None where the data is absent."""
    from evaldata import DEFAULT_DATA, DataError, load_locomo

    try:
        return [t.content for c in load_locomo(DEFAULT_DATA) for t in c.turns]
    except (DataError, OSError):
        return None


def raw_ceiling(n: int) -> float:
    """Rows/s of the same four inserts per memory (memory, revision, audit, search index) done
    directly with executemany on a fresh database, text already tokenized: the floor under the
    service's bulk path."""
    import tempfile
    from pathlib import Path

    from core.migrations import migrate
    from core.records import insert_memories, insert_revisions, memory_values, revision_values
    from core.search_index import index_row

    rng = random.Random(3)
    human = Caller.human()
    with scratch_cairn() as cairn:
        memories = [
            cairn.memories.prepare(
                human, WriteRequest(content=sentence(rng), kind="fact", scope=Scope.GLOBAL)
            )
            for _ in range(n)
        ]
    mem_rows = [memory_values(m, seq=i + 1, content_hash=f"h{i}") for i, m in enumerate(memories)]
    rev_rows = [
        revision_values(m, actor="human", action="write", reason=None, at=1) for m in memories
    ]
    audit_rows = [
        (1, "human", "human", 0, "write", m.id, 1, m.content[:80], "{}") for m in memories
    ]
    index_rows = [(i + 1, *index_row(m)) for i, m in enumerate(memories)]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        conn = sqlite3.connect(Path(tmp) / "raw.db", isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        migrate(conn)
        t0 = time.perf_counter()
        conn.execute("BEGIN")
        insert_memories(conn, mem_rows)
        insert_revisions(conn, rev_rows)
        conn.executemany(
            "INSERT INTO audit (at, actor_kind, actor, verified, action, memory_id, revision, "
            "preview, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            audit_rows,
        )
        conn.executemany(
            "INSERT INTO memory_fts (rowid, content, summary, tags, keywords) "
            "VALUES (?, ?, ?, ?, ?)",
            index_rows,
        )
        conn.execute("COMMIT")
        rate = n / (time.perf_counter() - t0)
        conn.close()
    return rate


def measure_reads(cairn: Cairn, rng: random.Random, size: int) -> dict[str, object]:
    """get and list latencies on the store as it is now (`size` memories)."""
    human = Caller.human()
    ids = [r[0] for r in cairn.store.read_db.conn().execute("SELECT id FROM memory")]
    get_stats = latency(lambda: cairn.memories.get(human, rng.choice(ids)), 2000)
    list_stats = latency(lambda: cairn.memories.list(human, limit=50), 500)
    deep = cairn.memories.list(human, limit=500)
    for _ in range(size // 1000):
        if deep.next_cursor is None:
            break
        deep = cairn.memories.list(human, limit=500, cursor=deep.next_cursor)
    cursor = deep.next_cursor
    deep_stats = latency(lambda: cairn.memories.list(human, limit=50, cursor=cursor), 500)
    filt = ListFilter(kinds=frozenset({"convention"}), tags=frozenset({"db"}))
    filt_stats = latency(lambda: cairn.memories.list(human, filt, limit=50), 500)
    print(f"\n{size:,} memories")
    print(f"  get                    {fmt(get_stats)}")
    print(f"  list first page (50)   {fmt(list_stats)}")
    print(f"  list deep page (50)    {fmt(deep_stats)}")
    print(f"  list kind+tag filter   {fmt(filt_stats)}")
    return {
        f"get_{size}": get_stats,
        f"list_{size}": list_stats,
        f"list_deep_{size}": deep_stats,
        f"list_filtered_{size}": filt_stats,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--writes", type=int, default=5000)
    parser.add_argument(
        "--queues", type=int, nargs="+", default=[200, 1000, 5000], help="proposals waiting"
    )
    parser.add_argument("--bulk-only", action="store_true", help="time only write_many")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    results: dict[str, object] = {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "machine": platform.machine(),
    }
    print(f"Python {results['python']}, SQLite {results['sqlite']}, {results['machine']}")

    for sync in () if args.bulk_only else ("NORMAL", "FULL"):
        rate = single_writes(args.writes, sync)
        results[f"single_writes_per_s_{sync.lower()}"] = rate
        print(f"acknowledged single writes ({sync:6}): {rate:8.0f} /s  ({args.writes} writes)")
    real = None if args.bulk_only else real_text()
    if real is not None:
        # The generated sentences come from a small vocabulary (two writes in three are told
        # `similar`): real conversation turns, where the data is here, for comparison.
        rate = single_writes(len(real), "NORMAL", real)
        results["single_writes_per_s_locomo"] = rate
        print(f"acknowledged single writes (NORMAL): {rate:8.0f} /s  ({len(real)} LoCoMo turns)")

    if not args.bulk_only:
        stats = shared_vocabulary_writes()
        results["shared_vocabulary_write_20000"] = stats
        print(f"write into 20,000 memories sharing one vocabulary: {fmt(stats)}")
        for size, stats in proposal_writes(args.queues).items():
            results[f"proposal_write_{size}"] = stats
            print(f"write that waits for review, {size:6,} waiting: {fmt(stats)}")

    human = Caller.human()
    rng = random.Random(7)
    with scratch_cairn() as cairn:
        total = 0
        bulk_rows = 0
        bulk_seconds = 0.0
        for size in sorted(args.sizes):
            while total < size:
                batch = min(10_000, size - total)
                reqs = [
                    WriteRequest(
                        content=sentence(rng),
                        kind=rng.choice(["fact", "convention"]),
                        scope=Scope.GLOBAL,
                        tags=(rng.choice(["ops", "db", "ui"]),),
                    )
                    for _ in range(batch)
                ]
                t0 = time.perf_counter()
                out = cairn.memories.write_many(human, reqs)
                bulk_seconds += time.perf_counter() - t0
                bulk_rows += batch
                total += batch
                assert all(getattr(o, "id", None) for o in out)
            if not args.bulk_only:
                results.update(measure_reads(cairn, rng, size))
        rate = bulk_rows / bulk_seconds
        results["bulk_rows_per_s"] = rate
        print(
            f"\nbulk insert (write_many, 10k per call): {rate:,.0f} rows/s over {bulk_rows:,} rows"
        )
    if not args.bulk_only:
        ceiling = raw_ceiling(20_000)
        results["raw_sqlite_rows_per_s"] = ceiling
        print(f"same four inserts per memory, raw executemany: {ceiling:,.0f} rows/s (20,000 rows)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
