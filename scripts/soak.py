"""Soak: does a long-running daemon keep its memory, file descriptors and threads flat?

A real `cairn serve` daemon (a subprocess, fresh store under /tmp, every write stored) serves
rounds of short-lived agent connections the way agents use it over a working day: each
connection says hello from one of a few workspaces and sessions, makes a handful of mixed calls
(write, search, get, list, context.build, changes.since, health.get) and goes - most close
politely, some drop their socket mid-request. One subscriber stays connected throughout,
reading its pushes. After each round the daemon's resident memory, open file descriptors and
threads are read from /proc (Linux only) and printed; at the end, the growth per 10,000
requests after the warm-up round. A daemon that leaks shows it here as a slope, a fixed cost
does not. Figures, not a test: tests check behaviour, this prints numbers.

    .venv/bin/python scripts/soak.py [--rounds 8] [--requests 2000] [--clients 8]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_search import grow, keyword_query, natural_question
from bench_socket import Daemon, start_daemon, write_params
from benchlib import unique_memories

from core.app import Cairn
from core.client import Client, RemoteError
from core.paths import Paths, resolve_paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.settings import load_settings
from core.validation import Limits

SEED = 20_261_201
PRELOAD = 2_000
CALLS_PER_CONNECTION = 12
DROP_SHARE = 0.1  # connections that drop their socket with a request in flight


@dataclass
class Sample:
    requests: int
    rss_kib: int
    anon_kib: int  # the heap and other anonymous memory: RSS less the file-backed pages
    store_kib: int
    fds: int
    threads: int


@dataclass
class Tally:
    requests: int = 0
    connections: int = 0
    dropped: int = 0
    pushes: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, requests: int, *, dropped: bool = False) -> None:
        with self.lock:
            self.requests += requests
            self.connections += 1
            self.dropped += dropped

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


def sample(pid: int, requests: int, database: Path) -> Sample:
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return Sample(
        requests=requests,
        rss_kib=int(values["VmRSS"].split()[0]),
        anon_kib=int(values["RssAnon"].split()[0]),
        store_kib=sum(
            p.stat().st_size // 1024
            for p in (database, database.with_name(database.name + "-wal"))
            if p.exists()
        ),
        fds=len(os.listdir(f"/proc/{pid}/fd")),
        threads=int(values["Threads"]),
    )


@dataclass
class Load:
    """What the connections of a soak share: the texts still to write, the queries, the
    workspaces, the ids written so far and the tally."""

    paths: Paths
    writes: list[dict[str, Any]]
    queries: list[str]
    workspaces: list[Path]
    write_share: float
    ids: list[str] = field(default_factory=list)
    tally: Tally = field(default_factory=Tally)

    def call(self, client: Client, rng: random.Random) -> None:
        """One call of the mix: writes (`write_share`), searches (to 60%), gets, lists,
        context bundles, changes and health."""
        roll = rng.random()
        if roll < self.write_share and self.writes:
            params = dict(self.writes.pop())
            if rng.random() < 0.3:
                params["scope"] = "project"
            result = client.call("memory.write", params)
            if result.get("id"):
                self.ids.append(result["id"])
        elif roll < 0.6:
            client.call("memory.search", {"query": rng.choice(self.queries), "limit": 10})
        elif roll < 0.7 and self.ids:
            # another workspace's project memory answers "not found"
            with contextlib.suppress(RemoteError):
                client.call("memory.get", {"id": rng.choice(self.ids)})
        elif roll < 0.8:
            client.call("memory.list", {"limit": 20})
        elif roll < 0.9:
            client.call("context.build", {"query": rng.choice(self.queries), "max_bytes": 4000})
        elif roll < 0.95:
            client.call("changes.since", {"seq": 0, "limit": 50})
        else:
            client.call("health.get")

    def connection(self, rng: random.Random) -> None:
        """Hello, a handful of mixed calls, goodbye (or a dropped socket)."""
        calls = 1  # the hello
        with Client.connect(
            self.paths,
            agent=f"soak-{rng.randrange(4)}",
            workspace=str(rng.choice(self.workspaces)),
            session=f"s-{rng.randrange(20)}",
            autostart=False,
        ) as client:
            for _ in range(CALLS_PER_CONNECTION):
                try:
                    self.call(client, rng)
                except RemoteError as e:
                    self.tally.error(f"{e.code}: {e}")
                calls += 1
            if rng.random() < DROP_SHARE:
                # a request sent, its answer never read: the client process went away
                client._sock.sendall(
                    b'{"jsonrpc":"2.0","id":999,"method":"memory.search","params":{"query":"x"}}\n'
                )
                client.abort()
                self.tally.add(calls + 1, dropped=True)
                return
        self.tally.add(calls)

    def round(self, clients: int, requests: int, seed: int) -> None:
        """`requests` more requests from `clients` threads, each opening connection after
        connection."""
        target = self.tally.requests + requests

        def worker(n: int) -> None:
            rng = random.Random(seed * 100 + n)
            while self.tally.requests < target:
                try:
                    self.connection(rng)
                except Exception as e:  # noqa: BLE001 - every failure is counted and shown
                    self.tally.error(f"{type(e).__name__}: {e}")

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()


def subscriber(paths: Paths, stop: threading.Event, tally: Tally) -> None:
    with Client.connect(paths, agent="soak-watch", autostart=False) as client:
        client.call("changes.subscribe")
        while not stop.is_set():
            if client.next_notification(timeout=0.2) is not None:
                with tally.lock:
                    tally.pushes += 1


def slope(samples: list[Sample], attr: str) -> float:
    """Least-squares growth of `attr` per 10,000 requests."""
    xs = [s.requests for s in samples]
    ys: list[float] = [getattr(s, attr) for s in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var * 10_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=8, help="rounds after warm-up (default 8)")
    parser.add_argument("--requests", type=int, default=2000, help="requests per round")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client threads")
    parser.add_argument(
        "--no-writes",
        action="store_true",
        help="searches in place of writes: the store stays as preloaded, so growth that remains "
        "is not the store's",
    )
    args = parser.parse_args()
    if args.rounds < 2 or args.requests < 1 or args.clients < 1:
        parser.error("--rounds must be at least 2, --requests and --clients at least 1")
    if not Path("/proc/self/status").exists():
        print("soak reads the daemon's memory from /proc: Linux only", file=sys.stderr)
        return 2
    started = time.perf_counter()
    home = Path(tempfile.mkdtemp(prefix="cz", dir="/tmp"))
    paths = resolve_paths({"CAIRN_HOME": str(home)})
    settings = load_settings(paths.settings_file)
    write_policy(paths.config / POLICY_FILE, all_auto(Limits(settings).kinds))
    workspaces = []
    for n in range(3):
        workspace = home / f"project-{n}"
        workspace.mkdir()
        workspaces.append(workspace)

    rng = random.Random(SEED)
    total = args.requests * (args.rounds + 1)
    corpus = unique_memories(rng, PRELOAD + total // 4)
    cairn = Cairn.open(paths)
    try:
        grow(cairn, corpus, 0, PRELOAD)
    finally:
        cairn.close()
    source = corpus[:PRELOAD]
    queries = [keyword_query(rng, rng.choice(source)) for _ in range(200)]
    queries += [natural_question(rng, rng.choice(source)) for _ in range(200)]
    writes = [write_params(rng, m) for m in corpus[PRELOAD:]]
    writes.reverse()  # popped from the end, in corpus order
    load = Load(paths, writes, queries, workspaces, 0.0 if args.no_writes else 0.2)
    tally = load.tally

    print(
        f"soak: {PRELOAD:,} memories preloaded; {args.clients} client threads; connections of "
        f"{CALLS_PER_CONNECTION} calls after hello from 3 workspaces, 20 sessions, 4 agents; "
        f"{DROP_SHARE:.0%} drop their socket mid-request; one subscriber throughout"
        + ("; searches in place of writes" if args.no_writes else "")
    )
    daemon: Daemon | None = None
    stop = threading.Event()
    watch: threading.Thread | None = None
    try:
        daemon = start_daemon(home, paths)
        watch = threading.Thread(target=subscriber, args=(paths, stop, tally))
        watch.start()
        pid = daemon.proc.pid
        start = sample(pid, 0, paths.database)
        print(
            f"daemon pid {pid}: {start.rss_kib / 1024:.1f} MiB, {start.fds} fds, "
            f"{start.threads} threads before any request"
        )
        print(
            f"{'round':>5} {'requests':>9} {'conns':>6} {'RSS MiB':>8} {'anon':>6} {'fds':>4} "
            f"{'threads':>7} {'errors':>6} {'store MiB':>9}"
        )
        samples: list[Sample] = []
        for n in range(args.rounds + 1):
            t0 = time.perf_counter()
            load.round(args.clients, args.requests, n)
            time.sleep(0.5)  # dropped connections are noticed and closed
            s = sample(pid, tally.requests, paths.database)
            label = "warm" if n == 0 else str(n)
            print(
                f"{label:>5} {s.requests:>9,} {tally.connections:>6,} {s.rss_kib / 1024:>8.1f} "
                f"{s.anon_kib / 1024:>6.1f} "
                f"{s.fds:>4} {s.threads:>7} {len(tally.errors):>6} {s.store_kib / 1024:>9.1f}   "
                f"({args.requests / (time.perf_counter() - t0):,.0f} req/s)"
            )
            if n > 0:
                samples.append(s)
        stop.set()
        watch.join()
        watch = None
        print(
            f"after warm-up, per 10,000 requests: RSS {slope(samples, 'rss_kib') / 1024:+.2f} MiB "
            f"(anonymous {slope(samples, 'anon_kib') / 1024:+.2f} MiB), "
            f"fds {slope(samples, 'fds'):+.2f}, threads {slope(samples, 'threads'):+.2f}"
        )
        print(
            f"{tally.requests:,} requests over {tally.connections:,} connections "
            f"({tally.dropped:,} dropped mid-request), {tally.pushes:,} pushes read, "
            f"{len(load.ids):,} memories written"
        )
        if tally.errors:
            print(f"{len(tally.errors)} errors; the first: {tally.errors[:3]}")
        code, seconds = daemon.stop()
        daemon = None
        print(f"daemon stopped with exit status {code} in {seconds:.2f} s")
    finally:
        stop.set()
        if watch is not None:
            watch.join()
        if daemon is not None:
            daemon.stop()
    print(f"wall time {time.perf_counter() - started:.0f} s; CAIRN_HOME={home}")
    return 1 if tally.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
