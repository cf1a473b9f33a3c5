"""Socket benchmark: round trips through a real `cairn serve` daemon over its Unix socket.

A fresh store under /tmp is preloaded in-process with 10k realistic memories (global and user
scope), then the headless daemon runs as a subprocess and `core.client.Client` connections time
`memory.write` and `memory.search` from one client, then a search/write mix from 16 clients at
once (one thread and one connection each). The daemon is stopped with SIGTERM at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_search import grow, keyword_query, natural_question
from benchlib import GeneratedMemory, percentile, unique_memories

from core.app import Cairn
from core.client import Client
from core.paths import Paths, resolve_paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.runtime import probe, socket_path
from core.search import EngineConfig
from core.settings import load_settings
from core.validation import Limits

ROOT = Path(__file__).resolve().parent.parent
SEED = 20_240_611
PRELOAD = 10_000
QUERIES_PER_KIND = 300  # keyword queries and natural questions, as in bench_search.py
WRITE_WARMUP = 50
SEARCH_SHARE = 0.8  # the default multi-client mix: 4 searches for every write
GOAL_SEARCH_P95_MS = 5.0  # one client, 10k memories, round trip through the socket
GOAL_REQUESTS_PER_S = 2000.0  # 16 clients, all requests together


# -- the daemon ---------------------------------------------------------------------------------


@dataclass
class Daemon:
    home: Path
    paths: Paths
    proc: subprocess.Popen[bytes]
    log: Path

    def cpu_seconds(self) -> float | None:
        """User + system CPU the daemon has used so far (Linux /proc), or None elsewhere."""
        try:
            stat = Path(f"/proc/{self.proc.pid}/stat").read_text(encoding="ascii")
        except OSError:
            return None
        fields = stat.rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> tuple[int, float]:
        """SIGTERM, then wait; (exit status, seconds it took to stop)."""
        t0 = time.perf_counter()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode, time.perf_counter() - t0


def start_daemon(home: Path, paths: Paths, code: Path = ROOT) -> Daemon:
    """`python -m core.cli serve` from the checkout `code` with CAIRN_HOME=home; returns once its
    socket answers."""
    env = dict(os.environ)
    env["CAIRN_HOME"] = str(home)
    env["PYTHONPATH"] = str(code)
    log = home / "daemon.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "serve"],
            cwd=code,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
        )
    daemon = Daemon(home, paths, proc, log)
    deadline = time.monotonic() + 30
    while not probe(socket_path(paths), timeout=0.2):
        if proc.poll() is not None:
            raise SystemExit(f"the daemon exited {proc.returncode}: {tail(log)}")
        if time.monotonic() > deadline:
            daemon.stop()
            raise SystemExit(f"the daemon did not start within 30 s: {tail(log)}")
        time.sleep(0.05)
    return daemon


def tail(log: Path, lines: int = 5) -> str:
    try:
        return " | ".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "no log"


# -- requests -----------------------------------------------------------------------------------


def write_params(rng: random.Random, m: GeneratedMemory) -> dict[str, Any]:
    """`memory.write` parameters for one generated memory: global or user scope, like the
    preloaded ones (bench_search.write_request), as an agent would send them."""
    params: dict[str, Any] = {
        "content": m.content,
        "kind": m.kind,
        "scope": "global" if rng.random() < 0.7 else "user",
        "importance": rng.choice((1, 2, 3, 3, 3, 3, 4, 4, 5)),
    }
    if m.tags:
        params["tags"] = list(m.tags)
    if m.summary:
        params["summary"] = m.summary
    if m.keywords:
        params["keywords"] = m.keywords
    return params


def check_stored(result: dict[str, Any]) -> None:
    """Every timed write must create a new memory (the corpus has no duplicates)."""
    if result.get("status") != "stored" or result.get("duplicate"):
        raise RuntimeError(f"a write was not stored as a new memory: {result}")


def check_got(result: dict[str, Any], wanted: str) -> None:
    if result.get("id") != wanted:
        raise RuntimeError(f"memory.get {wanted} answered {result.get('id')!r}")


def search_params(query: str) -> dict[str, Any]:
    return {"query": query, "limit": 10}


def summary(samples: Sequence[float]) -> dict[str, float]:
    values = list(samples)
    return {
        "median_ms": statistics.median(values),
        "p95_ms": percentile(values, 95),
        "p99_ms": percentile(values, 99),
    }


def timed(client: Client, method: str, params: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    t0 = time.perf_counter()
    result = client.call(method, params)
    return (time.perf_counter() - t0) * 1000, result


@dataclass
class Phase:
    """One timed phase: latencies per operation, wall time, and the CPU each side used."""

    name: str
    samples: dict[str, list[float]] = field(default_factory=dict)
    wall_s: float = 0.0
    daemon_cpu_s: float | None = None
    client_cpu_s: float = 0.0
    searches_with_hits: int = 0

    def add(self, op: str, ms: float) -> None:
        self.samples.setdefault(op, []).append(ms)

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.samples.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requests": self.requests,
            "wall_s": self.wall_s,
            "requests_per_s": self.requests / self.wall_s if self.wall_s else 0.0,
            "daemon_cpu_s": self.daemon_cpu_s,
            "client_cpu_s": self.client_cpu_s,
        }
        for op, values in self.samples.items():
            out[op] = {"count": len(values), **summary(values)}
        if len(self.samples) > 1:
            out["all"] = summary([v for values in self.samples.values() for v in values])
        if "search" in self.samples:
            out["searches_with_hits"] = self.searches_with_hits
        return out


def measure(daemon: Daemon, phase: Phase, body: Callable[[Phase], None]) -> Phase:
    cpu0, proc0, t0 = daemon.cpu_seconds(), time.process_time(), time.perf_counter()
    body(phase)
    phase.wall_s = time.perf_counter() - t0
    phase.client_cpu_s = time.process_time() - proc0
    cpu1 = daemon.cpu_seconds()
    phase.daemon_cpu_s = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    return phase


# -- phases -------------------------------------------------------------------------------------


def one_client_floor(daemon: Daemon, client: Client, n: int) -> Phase:
    """`capabilities`: framing, JSON and the worker-thread hop, without the store."""

    def body(phase: Phase) -> None:
        for _ in range(n):
            ms, _ = timed(client, "capabilities", {})
            phase.add("capabilities", ms)

    return measure(daemon, Phase("one client: capabilities (the floor: no store work)"), body)


def first_pass(daemon: Daemon, client: Client, queries: list[str]) -> Phase:
    def body(phase: Phase) -> None:
        for q in queries:
            ms, result = timed(client, "memory.search", search_params(q))
            phase.add("search", ms)
            phase.searches_with_hits += bool(result["results"])

    return measure(daemon, Phase("one client: first pass over every query"), body)


def one_client_search(
    daemon: Daemon, client: Client, queries: list[str], n: int, rng: random.Random
) -> Phase:
    def body(phase: Phase) -> None:
        order: list[str] = []
        for _ in range(n):
            if not order:
                order = list(queries)
                rng.shuffle(order)
            ms, result = timed(client, "memory.search", search_params(order.pop()))
            phase.add("search", ms)
            phase.searches_with_hits += bool(result["results"])

    return measure(daemon, Phase("one client: memory.search"), body)


def one_client_write(daemon: Daemon, client: Client, writes: list[dict[str, Any]]) -> Phase:
    def body(phase: Phase) -> None:
        for params in writes:
            ms, result = timed(client, "memory.write", params)
            check_stored(result)
            phase.add("write", ms)

    return measure(daemon, Phase("one client: memory.write"), body)


def many_clients(
    daemon: Daemon,
    *,
    clients: int,
    queries: list[str],
    writes: list[dict[str, Any]],
    total: int,
    search_share: float,
) -> Phase:
    """`clients` threads, one connection each, released together; each makes its share of
    `total` requests, `search_share` of them searches (a random query each), the rest writes of
    new memories. The clock runs from the release to the last answer."""
    shares = [total // clients + (i < total % clients) for i in range(clients)]
    plans: list[list[tuple[str, dict[str, Any]]]] = []
    next_write = 0
    for i, share in enumerate(shares):
        rng = random.Random(SEED + i)
        plan: list[tuple[str, dict[str, Any]]] = []
        for _ in range(share):
            if rng.random() < search_share:
                plan.append(("search", search_params(rng.choice(queries))))
            else:
                plan.append(("write", writes[next_write]))
                next_write += 1
        plans.append(plan)
    phase = Phase(f"{clients} clients, one connection each: {search_share:.0%} search, rest write")
    return run_clients(daemon, phase, plans)


def many_clients_get(daemon: Daemon, *, clients: int, ids: list[str], total: int) -> Phase:
    """The same release of `clients` connections, each making its share of `total`
    `memory.get` calls of random stored memories: what the server itself carries when a
    request costs little store work (a read by primary key)."""
    plans = []
    for i in range(clients):
        rng = random.Random(SEED + 100 + i)
        share = total // clients + (i < total % clients)
        plans.append([("get", {"id": rng.choice(ids)}) for _ in range(share)])
    phase = Phase(f"{clients} clients, one connection each: memory.get only")
    return run_clients(daemon, phase, plans)


def run_clients(
    daemon: Daemon, phase: Phase, plans: list[list[tuple[str, dict[str, Any]]]]
) -> Phase:
    """One connection and thread per plan, released together; the clock runs from the release
    to the last answer."""
    clients = len(plans)
    conns = [
        Client.connect(daemon.paths, agent=f"bench-{i + 1}", autostart=False)
        for i in range(clients)
    ]
    barrier = threading.Barrier(clients + 1)
    lock = threading.Lock()
    failures: list[BaseException] = []

    def worker(client: Client, plan: list[tuple[str, dict[str, Any]]]) -> None:
        local: list[tuple[str, float, bool]] = []
        try:
            barrier.wait()
            for op, params in plan:
                ms, result = timed(client, f"memory.{op}", params)
                if op == "write":
                    check_stored(result)
                elif op == "get":
                    check_got(result, params["id"])
                local.append((op, ms, op == "search" and bool(result["results"])))
        except BaseException as e:  # noqa: BLE001 - every failure is reported after the phase
            with lock:
                failures.append(e)
        with lock:
            for op, ms, hit in local:
                phase.add(op, ms)
                phase.searches_with_hits += hit

    threads = [
        threading.Thread(target=worker, args=(c, p), name=f"bench-client-{i + 1}")
        for i, (c, p) in enumerate(zip(conns, plans, strict=True))
    ]
    try:
        for t in threads:
            t.start()
        cpu0, proc0 = daemon.cpu_seconds(), time.process_time()
        barrier.wait()
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        phase.wall_s = time.perf_counter() - t0
        phase.client_cpu_s = time.process_time() - proc0
        cpu1 = daemon.cpu_seconds()
        phase.daemon_cpu_s = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    finally:
        for c in conns:
            c.close()
    if failures:
        raise SystemExit(f"{len(failures)} clients failed, first: {failures[0]!r}")
    return phase


# -- report -------------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def goal_line(label: str, figure: str, ok: bool) -> None:
    print(f"  {label:<50}{figure:<22}{verdict(ok)}")


def line(phase: Phase, op: str) -> str:
    s = summary(phase.samples[op])
    return (
        f"    {op:<12} n {len(phase.samples[op]):6,}  median {s['median_ms']:7.3f}  "
        f"p95 {s['p95_ms']:7.3f}  p99 {s['p99_ms']:7.3f} ms"
    )


def report(phase: Phase, extra: str = "") -> None:
    rate = phase.requests / phase.wall_s if phase.wall_s else 0.0
    print(f"\n  {phase.name}{extra}")
    for op in sorted(phase.samples):
        print(line(phase, op))
    if len(phase.samples) > 1:
        s = summary([v for values in phase.samples.values() for v in values])
        print(
            f"    {'all':<12} n {phase.requests:6,}  median {s['median_ms']:7.3f}  "
            f"p95 {s['p95_ms']:7.3f}  p99 {s['p99_ms']:7.3f} ms"
        )
    cpu = (
        f"daemon CPU {phase.daemon_cpu_s:.1f} s "
        f"({phase.daemon_cpu_s / phase.wall_s:.0%} of one core)"
        if phase.daemon_cpu_s is not None and phase.wall_s
        else "daemon CPU unknown"
    )
    print(
        f"    {phase.requests:,} requests in {phase.wall_s:.2f} s = {rate:,.0f} requests/s; "
        f"{cpu}; client CPU {phase.client_cpu_s:.1f} s"
    )
    if "search" in phase.samples:
        share = phase.searches_with_hits / len(phase.samples["search"])
        print(f"    {share:.0%} of searches returned something")


# -- main ---------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--requests",
        type=int,
        default=4000,
        metavar="N",
        help="timed requests per phase: one-client searches, one-client writes, and the "
        "multi-client mix in total (default 4000)",
    )
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument(
        "--search-share",
        type=float,
        default=SEARCH_SHARE,
        metavar="F",
        help=f"share of searches in the multi-client mix (default {SEARCH_SHARE:g})",
    )
    parser.add_argument(
        "--search-workers",
        type=int,
        metavar="N",
        help="server.search_workers for the daemon (default: the setting's default)",
    )
    parser.add_argument(
        "--code",
        type=Path,
        default=ROOT,
        metavar="DIR",
        help="the checkout whose daemon serves (default this one; another checkout compares - "
        "the store and the clients are this checkout's)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the scratch CAIRN_HOME")
    args = parser.parse_args()
    if args.requests < 1 or args.clients < 1:
        parser.error("--requests and --clients must be at least 1")
    if not 0 <= args.search_share <= 1:
        parser.error("--search-share must be between 0 and 1")
    started = time.perf_counter()

    home = Path(tempfile.mkdtemp(prefix="cs", dir="/tmp"))
    paths = resolve_paths({"CAIRN_HOME": str(home)})
    if args.search_workers is not None:
        paths.config.mkdir(parents=True, exist_ok=True)
        paths.settings_file.write_text(f"[server]\nsearch_workers = {args.search_workers}\n")
    settings = load_settings(paths.settings_file)
    digest = EngineConfig().digest()
    results: dict[str, Any] = {
        "engine_config": digest,
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "seed": SEED,
        "preload": PRELOAD,
        "requests_per_phase": args.requests,
        "clients": args.clients,
        "search_share": args.search_share,
        "server_workers": settings.integer("server.workers"),
        "search_workers": settings.integer("server.search_workers"),
        "goals": {
            "search_p95_ms_one_client_10k": GOAL_SEARCH_P95_MS,
            "requests_per_s_many_clients": GOAL_REQUESTS_PER_S,
        },
        "phases": {},
    }
    print(f"engine config {digest}")
    print(
        f"Python {results['python']}, SQLite {results['sqlite']}, {results['machine']}, "
        f"{results['cpus']} CPUs; daemon and clients share them"
    )
    print(
        f"goals: memory.search round trip p95 <= {GOAL_SEARCH_P95_MS:g} ms at 10k with one "
        f"client; >= {GOAL_REQUESTS_PER_S:,.0f} requests/s across 16 clients"
    )

    rng = random.Random(SEED)
    writes_needed = WRITE_WARMUP + args.requests + args.requests
    corpus = unique_memories(rng, PRELOAD + writes_needed)
    source = corpus[:PRELOAD]
    queries = [keyword_query(rng, rng.choice(source)) for _ in range(QUERIES_PER_KIND)]
    queries += [natural_question(rng, rng.choice(source)) for _ in range(QUERIES_PER_KIND)]
    writes = [write_params(rng, m) for m in corpus[PRELOAD:]]

    # Every write is stored (no review): this measures the store and the socket, not the queue.
    write_policy(paths.config / POLICY_FILE, all_auto(Limits(settings).kinds))
    t0 = time.perf_counter()
    cairn = Cairn.open(paths)
    try:
        load_s = grow(cairn, corpus, 0, PRELOAD)
    finally:
        cairn.close()
    print(
        f"store: CAIRN_HOME={home}; {PRELOAD:,} memories (global and user scope, "
        f"{sum(m.chinese for m in source) / PRELOAD:.0%} Chinese) written in-process with "
        f"write_many in {load_s:.1f} s ({time.perf_counter() - t0:.1f} s with open and close)"
    )

    daemon: Daemon | None = None
    try:
        t0 = time.perf_counter()
        daemon = start_daemon(home, paths, args.code.resolve())
        print(
            f"daemon: `python -m core.cli serve` from {args.code.resolve()}, "
            f"pid {daemon.proc.pid}, socket answered after "
            f"{time.perf_counter() - t0:.2f} s; {settings.integer('server.workers')} worker "
            f"threads, {settings.integer('server.search_workers')} for searches"
        )
        with Client.connect(paths, agent="bench", autostart=False) as client:
            limits = client.hello["limits"]
            print(
                f"hello: agent {client.hello['agent']!r}, verified {client.hello['verified']}, "
                f"protocol {client.hello['protocol_version']}; limits "
                + ", ".join(f"{k} {v}" for k, v in limits.items())
            )
            count = client.call("status")["memories"]
            if count != PRELOAD:
                raise SystemExit(f"the daemon reports {count:,} memories, expected {PRELOAD:,}")
            print(
                f"queries: {len(queries)} ({QUERIES_PER_KIND} short keyword queries, "
                f"{QUERIES_PER_KIND} natural questions, as in bench_search.py), limit 10; "
                f"{args.requests:,} timed requests per phase"
            )

            print(f"\nat {count:,} memories")
            floor = one_client_floor(daemon, client, args.requests)
            report(floor)
            cold = first_pass(daemon, client, queries)
            report(cold, " (cold: each query once, not counted below)")
            search = one_client_search(daemon, client, queries, args.requests, random.Random(SEED))
            report(search)

            for params in writes[:WRITE_WARMUP]:
                client.call("memory.write", params)
            write = one_client_write(
                daemon, client, writes[WRITE_WARMUP : WRITE_WARMUP + args.requests]
            )
            report(write, f" (after {WRITE_WARMUP} untimed writes)")
            count = client.call("status")["memories"]
            ids = [m["id"] for m in client.call("memory.list", {"limit": 100})["items"]]

        print(f"\nat {count:,} memories, growing as the clients write")
        mix = many_clients(
            daemon,
            clients=args.clients,
            queries=queries,
            writes=writes[WRITE_WARMUP + args.requests :],
            total=args.requests,
            search_share=args.search_share,
        )
        report(mix, "")
        with Client.connect(paths, agent="bench", autostart=False) as client:
            final = client.call("status")["memories"]
        print(f"    store ends at {final:,} memories")
        print("  the same clients reading instead (no goal: how much the server carries)")
        reads = many_clients_get(daemon, clients=args.clients, ids=ids, total=args.requests)
        report(reads, "")

        results["phases"] = {
            "floor_one_client": floor.to_dict(),
            "first_pass": cold.to_dict(),
            "search_one_client": search.to_dict(),
            "write_one_client": write.to_dict(),
            "mix_many_clients": mix.to_dict(),
            "get_many_clients": reads.to_dict(),
        }
        search_p95 = summary(search.samples["search"])["p95_ms"]
        rate = mix.requests / mix.wall_s
        met = {
            "search_p95_one_client_10k": search_p95 <= GOAL_SEARCH_P95_MS,
            "requests_per_s_many_clients": rate >= GOAL_REQUESTS_PER_S,
        }
        results["goals_met"] = met
        print(f"\ngoals (engine config {digest})")
        goal_line(
            f"memory.search p95 <= {GOAL_SEARCH_P95_MS:g} ms, one client, 10k",
            f"{search_p95:.2f} ms",
            met["search_p95_one_client_10k"],
        )
        goal_line(
            f">= {GOAL_REQUESTS_PER_S:,.0f} requests/s across {args.clients} clients",
            f"{rate:,.0f} requests/s",
            met["requests_per_s_many_clients"],
        )
    finally:
        if daemon is not None:
            status, seconds = daemon.stop()
            stopped = "Cairn stopped" in tail(daemon.log, 3)
            print(
                f"\ndaemon stopped with SIGTERM: exit {status} after {seconds:.2f} s"
                f"{', log says Cairn stopped' if stopped else '; log: ' + tail(daemon.log)}"
            )
            results["daemon_exit"] = status
        if args.keep:
            print(f"kept {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)

    wall = time.perf_counter() - started
    results["wall_s"] = wall
    print(f"wall time {wall:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
