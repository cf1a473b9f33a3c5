"""Search benchmark: latency of the search service API against the same FTS5 MATCH run raw."""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import random
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any

from benchlib import CHINESE_WORDS, GeneratedMemory, percentile, scratch_cairn, unique_memories

from core.app import Cairn
from core.model import Caller, Scope, Surface
from core.requests import WriteRequest
from core.search import SearchRequest
from core.tokenizer import ENGLISH_STOPWORDS

if TYPE_CHECKING:
    from _lsprof import profiler_entry

SEED = 20_240_611
BATCH = 10_000
AGENT = Caller(Surface.AGENT, agent="bench", verified=True, workspace_id=None)
RAW_SQL = (
    "SELECT rowid, bm25(memory_fts) FROM memory_fts WHERE memory_fts MATCH ? ORDER BY 2 LIMIT 60"
)
GOAL_P95_MS = {10_000: 5.0, 100_000: 25.0}  # through the service API
GOAL_OVERHEAD = 2.0  # service / raw FTS5, at the median and at p95
WRITES_BETWEEN = 300  # per store size: searches timed right after a new memory is written

# Queries about things no memory mentions (an agent asks those too).
_MISS_KEYWORDS = (
    "printer toner",
    "quarterly budget",
    "offsite",
    "espresso machine",
    "parking",
    "okr",
    "helsinki",
    "31337",
    "9.99.1",
    "报销",
    "年假",
    "打印机",
    "停车位",
)
_MISS_QUESTIONS = (
    "what is the wifi password for the meeting room on floor {n}?",
    "who approves travel expenses above {n} euros for the sales team?",
    "when is the next company offsite and where will it be held?",
    "how many vacation days do new employees get in their first year?",
    "which printer on floor {n} supports double sided colour printing?",
    "what did the marketing team decide about the spring campaign budget?",
    "公司年会一般在几月份举办，地点在哪里？",
    "报销超过 {n} 元的差旅费用需要谁审批？",
)
_ENGLISH_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")

# -- queries ------------------------------------------------------------------------------------


def keyword_query(rng: random.Random, memory: GeneratedMemory) -> str:
    """1-3 words an agent might type: words of the memory, one of its symbols (a port, a
    version, a path), a Chinese word, or now and then something no memory mentions."""
    roll = rng.random()
    if roll < 0.1:
        return rng.choice(_MISS_KEYWORDS)
    if memory.chinese:
        words = [w for w in CHINESE_WORDS if w in memory.content]
        if memory.symbols and (roll > 0.75 or not words):
            symbol = rng.choice(memory.symbols)
            return f"{symbol} {rng.choice(words)}" if words and rng.random() < 0.5 else symbol
        return rng.choice(words) if words else rng.choice(_MISS_KEYWORDS)
    words = [w for w in _ENGLISH_WORD.findall(memory.content) if w.lower() not in ENGLISH_STOPWORDS]
    if memory.symbols and (roll < 0.4 or not words):
        symbol = rng.choice(memory.symbols)
        return f"{rng.choice(words)} {symbol}" if words and rng.random() < 0.5 else symbol
    if not words:
        return rng.choice(_MISS_KEYWORDS)
    return " ".join(rng.sample(words, min(len(words), rng.choice((1, 2, 2, 3)))))


def natural_question(rng: random.Random, memory: GeneratedMemory) -> str:
    """An 8-12 word question (or its Chinese counterpart), mostly one this memory answers."""
    if rng.random() < 0.12:
        return rng.choice(_MISS_QUESTIONS).format(n=rng.randint(2, 2000))
    return rng.choice(memory.questions)


@dataclass
class QuerySet:
    name: str
    title: str
    queries: list[str]

    @property
    def chinese_share(self) -> float:
        return sum(bool(re.search(r"[\u4e00-\u9fff]", q)) for q in self.queries) / len(self.queries)


def query_sets(rng: random.Random, source: Sequence[GeneratedMemory], n: int) -> list[QuerySet]:
    """Both query sets, drawn from memories that every store size holds."""
    return [
        QuerySet(
            "keyword",
            "short keyword queries",
            [keyword_query(rng, rng.choice(source)) for _ in range(n)],
        ),
        QuerySet(
            "question",
            "natural questions",
            [natural_question(rng, rng.choice(source)) for _ in range(n)],
        ),
    ]


# -- loading ------------------------------------------------------------------------------------


def write_request(rng: random.Random, m: GeneratedMemory) -> WriteRequest:
    return WriteRequest(
        content=m.content,
        kind=m.kind,
        scope=Scope.GLOBAL if rng.random() < 0.7 else Scope.USER,
        tags=m.tags,
        summary=m.summary,
        keywords=m.keywords,
        importance=rng.choice((1, 2, 3, 3, 3, 3, 4, 4, 5)),
        pinned=rng.random() < 0.02,
    )


def grow(cairn: Cairn, corpus: Sequence[GeneratedMemory], start: int, end: int) -> float:
    """Write corpus[start:end] through `write_many` in batches of 10k; seconds it took."""
    human = Caller.human()
    rng = random.Random(SEED + start)
    reqs = [write_request(rng, m) for m in corpus[start:end]]
    t0 = time.perf_counter()
    for i in range(0, len(reqs), BATCH):
        out = cairn.memories.write_many(human, reqs[i : i + BATCH])
        failed = [o for o in out if isinstance(o, Exception)]
        if failed:
            raise SystemExit(f"{len(failed)} writes failed, first: {failed[0]}")
    return time.perf_counter() - t0


# -- timing -------------------------------------------------------------------------------------


@dataclass
class SetResult:
    name: str
    queries: int
    without_plan: int
    service_ms: list[float] = field(default_factory=list)
    cold_ms: list[float] = field(default_factory=list)  # the first pass: caches not yet warm
    raw_ms: list[float] = field(default_factory=list)
    per_query_ms: list[float] = field(default_factory=list)  # service total per query
    with_hits: int = 0
    hits: int = 0

    def service(self) -> dict[str, float]:
        return summary(self.service_ms)

    def raw(self) -> dict[str, float]:
        return summary(self.raw_ms)

    def overhead(self) -> dict[str, float]:
        s, r = self.service(), self.raw()
        return {"median": s["median_ms"] / r["median_ms"], "p95": s["p95_ms"] / r["p95_ms"]}


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "median_ms": percentile(samples, 50),
        "p95_ms": percentile(samples, 95),
        "p99_ms": percentile(samples, 99),
    }


def time_set(
    cairn: Cairn, raw: sqlite3.Connection, qs: QuerySet, rounds: int, rng: random.Random
) -> SetResult:
    """Warm up with every query once, then `rounds` passes in a shuffled order; each query runs
    through the service API and, when it has a plan, straight after as raw FTS5."""
    plans = [cairn.search.plan(q) for q in qs.queries]
    reqs = [SearchRequest(query=q, limit=10) for q in qs.queries]
    result = SetResult(qs.name, len(reqs), sum(p is None for p in plans))
    result.per_query_ms = [0.0] * len(reqs)
    for req, plan in zip(reqs, plans, strict=True):
        t0 = time.perf_counter()
        found = len(cairn.search.search(AGENT, req).hits)
        result.cold_ms.append((time.perf_counter() - t0) * 1000)
        result.with_hits += found > 0
        result.hits += found
        if plan is not None:
            raw.execute(RAW_SQL, (plan,)).fetchall()
    order = list(range(len(reqs)))
    clock = time.perf_counter
    for _ in range(rounds):
        rng.shuffle(order)
        for i in order:
            t0 = clock()
            cairn.search.search(AGENT, reqs[i])
            elapsed = (clock() - t0) * 1000
            result.service_ms.append(elapsed)
            result.per_query_ms[i] += elapsed
            plan = plans[i]
            if plan is not None:
                t0 = clock()
                raw.execute(RAW_SQL, (plan,)).fetchall()
                result.raw_ms.append((clock() - t0) * 1000)
    return result


def time_after_writes(
    cairn: Cairn, qs: QuerySet, writes: Sequence[GeneratedMemory], rng: random.Random
) -> list[float]:
    """Each search right after one new memory is written (by a person, through the service):
    an agent that writes as it works searches with every per-commit cache cold. Returns the
    searches' times (ms); the writes are not timed."""
    human = Caller.human()
    queries = list(qs.queries)
    rng.shuffle(queries)
    out: list[float] = []
    for i, m in enumerate(writes):
        written = cairn.memories.write(human, write_request(rng, m))
        if written.id is None or written.duplicate:
            raise SystemExit(f"a write between searches did not store a new memory: {written}")
        req = SearchRequest(query=queries[i % len(queries)], limit=10)
        t0 = time.perf_counter()
        cairn.search.search(AGENT, req)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "NOT met"


def report(size: int, qs: QuerySet, r: SetResult) -> None:
    s, raw, ov = r.service(), r.raw(), r.overhead()
    print(
        f"  {qs.title} ({r.queries}, {qs.chinese_share:.0%} Chinese; "
        f"{r.with_hits / r.queries:.0%} found something, {r.hits / r.queries:.1f} hits on average)"
    )
    goal = GOAL_P95_MS.get(size)
    goal_text = f"goal p95 <= {goal:g} ms: {verdict(s['p95_ms'], goal)}" if goal else "no goal"
    print(
        f"    service API       median {s['median_ms']:7.3f}  p95 {s['p95_ms']:7.3f}  "
        f"p99 {s['p99_ms']:7.3f} ms   {goal_text}"
    )
    cold = summary(r.cold_ms)
    print(
        f"    first pass (cold) median {cold['median_ms']:7.3f}  p95 {cold['p95_ms']:7.3f}  "
        f"p99 {cold['p99_ms']:7.3f} ms   (each query once, before any is repeated)"
    )
    print(
        f"    raw FTS5 MATCH    median {raw['median_ms']:7.3f}  p95 {raw['p95_ms']:7.3f}  "
        f"p99 {raw['p99_ms']:7.3f} ms   "
        f"({r.queries - r.without_plan} queries; {r.without_plan} without a plan skipped)"
    )
    worst = max(ov.values())
    print(
        f"    overhead          median {ov['median']:6.1f}x  p95 {ov['p95']:6.1f}x"
        f"{'':17}goal <= {GOAL_OVERHEAD:g}x: {verdict(worst, GOAL_OVERHEAD)}"
    )


def goals(by_size: dict[int, list[tuple[QuerySet, SetResult]]], digest: str) -> dict[str, bool]:
    """One line per goal: the worst figure measured against it, and whether it is met."""
    print(f"\ngoals (engine config {digest})")
    met: dict[str, bool] = {}
    for size, goal in GOAL_P95_MS.items():
        if size not in by_size:
            continue
        figures = [(qs.name, r.service()["p95_ms"]) for qs, r in by_size[size]]
        worst = max(v for _, v in figures)
        met[f"service_p95_{size}"] = worst <= goal
        shown = ", ".join(f"{name} {v:.1f} ms" for name, v in figures)
        label = f"service API p95 <= {goal:g} ms at {size // 1000}k"
        print(f"  {label:<36}{shown:<40}{verdict(worst, goal)}")
    for size, pairs in by_size.items():
        figures = [(f"{qs.name} {k}", v) for qs, r in pairs for k, v in r.overhead().items()]
        name, worst = max(figures, key=lambda f: f[1])
        met[f"overhead_{size}"] = worst <= GOAL_OVERHEAD
        label = f"service / raw FTS5 <= {GOAL_OVERHEAD:g}x at {size:,}"
        print(f"  {label:<36}{f'worst {worst:.1f}x ({name})':<40}{verdict(worst, GOAL_OVERHEAD)}")
    return met


# -- profile ------------------------------------------------------------------------------------

Code = CodeType | str  # a Python function's code, or a built-in's description
_SEARCH_FILE = os.path.join("core", "search.py")


def _name(code: Code) -> str:
    if isinstance(code, str):
        return code
    return f"{code.co_name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"


def _instrument(code: Code) -> bool:
    """SQLite calls (timed apart) and this script's own stand-ins."""
    if isinstance(code, str):
        return "sqlite3." in code
    return os.path.abspath(code.co_filename) == os.path.abspath(__file__)


def _step_of(frame: FrameType | None) -> str:
    """The function `SearchService.search` called that is (or leads to) this frame."""
    step = "search"
    while frame is not None:
        code = frame.f_code
        if code.co_name == "search" and code.co_filename.endswith(_SEARCH_FILE):
            return step
        if not code.co_name.startswith("<"):  # comprehensions are not steps
            step = code.co_name
        frame = frame.f_back
    return "(outside search)"


def _statement(sql: str) -> str:
    text = re.sub(r"\s+", " ", sql).strip()
    return re.sub(r"\?(?:, \?)+", "?, ...", text)


class SqlClock:
    """Seconds spent in SQLite per (step of search, statement): every execute and every row
    pulled from its cursor, measured through a stand-in for the store's read connection."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], float] = {}
        self.runs: dict[tuple[str, str], int] = {}

    def add(self, key: tuple[str, str], seconds: float) -> None:
        self.seconds[key] = self.seconds.get(key, 0.0) + seconds

    def total(self) -> float:
        return sum(self.seconds.values())

    def by(self, index: int) -> dict[str, float]:
        out: dict[str, float] = {}
        for key, seconds in self.seconds.items():
            out[key[index]] = out.get(key[index], 0.0) + seconds
        return out


class _TimedCursor:
    def __init__(self, cursor: sqlite3.Cursor, clock: SqlClock, key: tuple[str, str]) -> None:
        self._cursor, self._clock, self._key = cursor, clock, key

    def __iter__(self) -> Iterator[Any]:
        while True:
            t0 = time.perf_counter()
            row = self._cursor.fetchone()
            self._clock.add(self._key, time.perf_counter() - t0)
            if row is None:
                return
            yield row

    def _timed(self, fn: Callable[[], Any]) -> Any:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            self._clock.add(self._key, time.perf_counter() - t0)

    def fetchone(self) -> Any:
        return self._timed(self._cursor.fetchone)

    def fetchall(self) -> list[Any]:
        rows: list[Any] = self._timed(self._cursor.fetchall)
        return rows

    def fetchmany(self, size: int = 1) -> list[Any]:
        rows: list[Any] = self._timed(lambda: self._cursor.fetchmany(size))
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class _TimedConnection:
    def __init__(self, conn: sqlite3.Connection, clock: SqlClock) -> None:
        self._conn, self._clock = conn, clock

    def execute(self, sql: str, params: Any = ()) -> _TimedCursor:
        key = (_step_of(sys._getframe(1)), _statement(sql))
        self._clock.runs[key] = self._clock.runs.get(key, 0) + 1
        t0 = time.perf_counter()
        cursor = self._conn.execute(sql, params)
        self._clock.add(key, time.perf_counter() - t0)
        return _TimedCursor(cursor, self._clock, key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


@contextmanager
def timed_sql(cairn: Cairn) -> Iterator[SqlClock]:
    """Hand the search service a timing stand-in for its read connection (this process only;
    the engine's code is unchanged)."""
    clock = SqlClock()
    read_db = cairn.store.read_db
    original = read_db.conn
    read_db.__dict__["conn"] = lambda: _TimedConnection(original(), clock)
    try:
        yield clock
    finally:
        del read_db.__dict__["conn"]


def _steps(entries: list[profiler_entry], search: profiler_entry) -> dict[str, list[float]]:
    """What `search` calls directly, looking through comprehensions (functions of their own in
    a profile): name -> [calls, seconds]."""
    by_code = {e.code: e for e in entries}
    out: dict[str, list[float]] = {}

    def walk(code: Code, calls: float, seconds: float) -> None:
        callee = by_code.get(code)
        if isinstance(code, CodeType) and code.co_name.startswith("<") and callee:
            share = seconds / max(1e-12, callee.totaltime)
            row = out.setdefault("search", [0.0, 0.0])
            row[1] += callee.inlinetime * share
            for sub in callee.calls or []:
                walk(sub.code, sub.callcount * share, sub.totaltime * share)
            return
        row = out.setdefault(code if isinstance(code, str) else code.co_name, [0.0, 0.0])
        row[0] += calls
        row[1] += seconds

    for sub in search.calls or []:
        walk(sub.code, sub.callcount, sub.totaltime)
    own = out.setdefault("search", [0.0, 0.0])
    own[0] = search.callcount
    own[1] += search.inlinetime
    return out


def profile(cairn: Cairn, size: int, qs: QuerySet, r: SetResult, rounds: int) -> dict[str, Any]:
    """Where the time of the slowest queries of the slowest case goes: SQLite per statement and
    per step of `SearchService.search`, Python per step (cProfile, scaled back to real time)."""
    slowest = sorted(range(r.queries), key=lambda i: -r.per_query_ms[i])[:20]
    reqs = [SearchRequest(query=qs.queries[i], limit=10) for i in slowest]
    searches = len(reqs) * rounds
    per = 1000 / searches  # seconds in total -> ms per search

    def run() -> float:
        t0 = time.perf_counter()
        for _ in range(rounds):
            for req in reqs:
                cairn.search.search(AGENT, req)
        return time.perf_counter() - t0

    plain = run()
    with timed_sql(cairn) as sql:
        with_clock = run()
    prof = cProfile.Profile()
    with timed_sql(cairn) as profiled_sql:
        prof.enable()
        run()
        prof.disable()
    entries = prof.getstats()
    found = [
        e
        for e in entries
        if isinstance(e.code, CodeType)
        and e.code.co_name == "search"
        and e.code.co_filename.endswith(_SEARCH_FILE)
    ]

    print(f"\nprofile: the {len(reqs)} slowest {qs.title} at {size:,} memories, {rounds} rounds")
    for i in slowest[:5]:
        print(f"  {r.per_query_ms[i] / rounds:7.2f} ms  {qs.queries[i]!r}")
        print(f"{'':13}plan: {cairn.search.plan(qs.queries[i])}")
    # Shares are of the pass that timed the SQL (its Python part includes the stand-in's cost).
    sql_total = sql.total()
    base = with_clock
    python = base - sql_total
    print(
        f"  {plain * per:.2f} ms per search; with the SQL timed {base * per:.2f} ms: SQLite "
        f"{sql_total * per:.2f} ms ({sql_total / base:.0%}), Python {python * per:.2f} ms "
        f"({python / base:.0%})"
    )
    print(f"  {'SQL statement':<78}{'runs':>6}{'ms':>8}{'share':>7}")
    statements = sorted(sql.by(1).items(), key=lambda kv: -kv[1])
    runs = {s: 0 for s, _ in statements}
    for (_, statement), n in sql.runs.items():
        runs[statement] += n
    for statement, seconds in statements:
        if seconds / base >= 0.002:
            shown = statement if len(statement) <= 77 else statement[:74] + "..."
            print(
                f"  {shown:<78}{runs[statement] / searches:6.1f}{seconds * per:8.2f}"
                f"{seconds / base:7.1%}"
            )
    steps_out: dict[str, dict[str, float]] = {}
    if found:
        search = found[0]
        steps = _steps(entries, search)
        step_sql = sql.by(0)
        profiled_step_sql = profiled_sql.by(0)
        python_profiled = search.totaltime - profiled_sql.total()
        scale = python / max(1e-12, python_profiled)
        print(
            f"  {'step of search()':<30}{'calls':>7}{'SQLite ms':>11}{'Python ms':>11}"
            f"{'total ms':>10}{'share':>7}   (Python: cProfile x {scale:.2f})"
        )
        rows = []
        for name, (calls, seconds) in steps.items():
            py = max(0.0, seconds - profiled_step_sql.get(name, 0.0)) * scale
            rows.append((name, calls, step_sql.get(name, 0.0), py))
        for name, calls, step_sqlite, py in sorted(rows, key=lambda x: -(x[2] + x[3])):
            steps_out[name] = {"sqlite_ms": step_sqlite * per, "python_ms": py * per}
            if (step_sqlite + py) / base >= 0.005:
                print(
                    f"  {name[:29]:<30}{calls / searches:7.1f}{step_sqlite * per:11.2f}"
                    f"{py * per:11.2f}{(step_sqlite + py) * per:10.2f}"
                    f"{(step_sqlite + py) / base:7.1%}"
                )
        print("  most own Python time (cProfile, profiler overhead included):")
        for e in sorted(
            (e for e in entries if not _instrument(e.code)),
            key=lambda e: -e.inlinetime,
        )[:8]:
            print(
                f"    {e.inlinetime * per:8.3f} ms  {e.callcount / searches:8.1f}x  {_name(e.code)}"
            )
    return {
        "size": size,
        "query_set": qs.name,
        "queries": [qs.queries[i] for i in slowest],
        "ms_per_search": plain * per,
        "sqlite_ms_per_search": sql_total * per,
        "statements_ms_per_search": {s: v * per for s, v in statements},
        "steps": steps_out,
    }


# -- main ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=300, help="queries per set (default 300)")
    parser.add_argument("--rounds", type=int, default=2, help="timed passes per set (default 2)")
    parser.add_argument("--profile", action="store_true", help="profile the slowest case")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    sizes = sorted(set(args.sizes))
    started = time.perf_counter()

    with scratch_cairn() as cairn:
        digest = cairn.search.config.digest()
        results: dict[str, Any] = {
            "engine_config": digest,
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "seed": SEED,
            "queries_per_set": args.queries,
            "rounds": args.rounds,
            "goals": {"service_p95_ms": GOAL_P95_MS, "overhead_max": GOAL_OVERHEAD},
            "sizes": {},
        }
        print(f"engine config {digest}")
        print(
            f"Python {results['python']}, SQLite {results['sqlite']}, {results['machine']}, "
            f"{results['cpus']} CPUs"
        )
        print(
            "goals: service API p95 <= 5 ms at 10k and <= 25 ms at 100k; "
            f"service/raw FTS5 <= {GOAL_OVERHEAD:g}x"
        )

        rng = random.Random(SEED)
        t0 = time.perf_counter()
        corpus = unique_memories(rng, sizes[-1])
        sets = query_sets(rng, corpus[: sizes[0]], args.queries)
        # Written between searches (a generator of its own: the corpus and queries stay as
        # they were before this was measured).
        known = {m.content for m in corpus}
        between = [
            m
            for m in unique_memories(random.Random(SEED + 1), 2 * WRITES_BETWEEN * len(sizes))
            if m.content not in known
        ][: WRITES_BETWEEN * len(sizes)]
        print(
            f"corpus: {len(corpus):,} memories ({sum(m.chinese for m in corpus) / len(corpus):.0%} "
            f"Chinese, {sum(len(m.content) for m in corpus) / len(corpus):.0f} characters on "
            f"average), {args.queries} queries per set, generated in "
            f"{time.perf_counter() - t0:.1f} s (seed {SEED})"
        )
        raw = sqlite3.connect(cairn.store.path)
        loaded = 0
        extra = 0  # memories written between searches so far
        by_size: dict[int, list[tuple[QuerySet, SetResult]]] = {}
        for size in sizes:
            seconds = grow(cairn, corpus, loaded, size)
            rate = (size - loaded) / seconds
            loaded = size
            stored = raw.execute("SELECT count(*) FROM memory").fetchone()[0]
            if stored != size + extra:
                raise SystemExit(f"the store holds {stored:,} memories, expected {size + extra:,}")
            print(f"\n{size:,} memories (loaded in {seconds:.1f} s, {rate:,.0f} rows/s)")
            entry: dict[str, Any] = {"load_rows_per_s": rate}
            by_size[size] = []
            for qs in sets:
                r = time_set(cairn, raw, qs, args.rounds, random.Random(SEED + size))
                report(size, qs, r)
                by_size[size].append((qs, r))
                entry[qs.name] = {
                    "queries": r.queries,
                    "without_plan": r.without_plan,
                    "found_something": r.with_hits / r.queries,
                    "service": r.service(),
                    "first_pass_cold": summary(r.cold_ms),
                    "raw_fts5": r.raw(),
                    "overhead": r.overhead(),
                }
            questions = sets[-1]
            after = time_after_writes(
                cairn,
                questions,
                between[extra : extra + WRITES_BETWEEN],
                random.Random(SEED + size + 1),
            )
            extra += WRITES_BETWEEN
            s = summary(after)
            print(
                f"  {questions.title}, each right after a write ({len(after)}; every per-commit "
                f"cache cold)\n    service API       median {s['median_ms']:7.3f}  "
                f"p95 {s['p95_ms']:7.3f}  p99 {s['p99_ms']:7.3f} ms"
            )
            entry["after_a_write"] = {"searches": len(after), "service": s}
            results["sizes"][str(size)] = entry
        raw.close()
        results["goals_met"] = goals(by_size, digest)

        if args.profile:
            qs, r = max(by_size[sizes[-1]], key=lambda pair: pair[1].service()["p95_ms"])
            results["profile"] = profile(cairn, sizes[-1], qs, r, args.rounds)

    wall = time.perf_counter() - started
    results["wall_s"] = wall
    print(f"\nwall time {wall:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
