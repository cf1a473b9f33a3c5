"""MCP benchmark: `memory_search` tool calls over stdio through a real `cairn mcp` bridge.

A fresh store under /tmp is preloaded in-process with 10k realistic memories (global and user
scope, as in bench_socket.py), the headless daemon runs as a subprocess, and the MCP SDK's own
stdio client launches `python -m core.cli mcp` and times `memory_search` calls end to end (MCP
JSON-RPC over pipes, the bridge, the socket, the search). The same queries are then timed
straight over the socket, so the bridge's own share shows. The daemon is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from bench_search import grow, keyword_query, natural_question
from bench_socket import ROOT, start_daemon, tail
from benchlib import percentile, unique_memories
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

from core.app import Cairn
from core.client import Client
from core.paths import resolve_paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.settings import load_settings
from core.validation import Limits

SEED = 20_240_611
PRELOAD = 10_000
QUERIES_PER_KIND = 150
WARMUP = 30
GOAL_SEARCH_P95_MS = 25.0  # one MCP client, 10k memories, a tool call over stdio


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "count": float(len(samples)),
        "median_ms": statistics.median(samples),
        "p95_ms": percentile(samples, 95),
        "p99_ms": percentile(samples, 99),
    }


def line(label: str, s: dict[str, float]) -> str:
    return (
        f"  {label:<34} n {int(s['count']):5,}  median {s['median_ms']:7.3f}  "
        f"p95 {s['p95_ms']:7.3f}  p99 {s['p99_ms']:7.3f} ms"
    )


async def over_mcp(
    home: Path, workspace: Path, queries: list[str], n: int, rng: random.Random
) -> tuple[float, list[float], int]:
    """(seconds to the first answered call, per-call latencies, calls with hits)."""
    env = dict(os.environ)
    env["CAIRN_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    env["CAIRN_NO_AUTOSTART"] = "1"  # the daemon runs already; never start a second one
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "core.cli", "mcp", "--agent", "bench-mcp", "--workspace", str(workspace)],
        env=env,
        cwd=str(ROOT),
    )
    samples: list[float] = []
    hits = 0
    with (home / "bridge.log").open("w", encoding="utf-8") as errlog:
        t0 = time.perf_counter()
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(
                read, write, client_info=Implementation(name="bench", version="1")
            ) as session,
        ):
            await session.initialize()
            first = await session.call_tool("memory_search", {"query": queries[0]})
            if first.is_error:
                raise SystemExit(f"the bridge answered an error: {first.content}")
            startup = time.perf_counter() - t0
            for q in queries[:WARMUP]:
                await session.call_tool("memory_search", {"query": q, "limit": 10})
            order: list[str] = []
            for _ in range(n):
                if not order:
                    order = list(queries)
                    rng.shuffle(order)
                t = time.perf_counter()
                result = await session.call_tool(
                    "memory_search", {"query": order.pop(), "limit": 10}
                )
                samples.append((time.perf_counter() - t) * 1000)
                structured = result.structured_content or {}
                hits += bool(structured.get("results"))
    return startup, samples, hits


def over_socket(
    home: Path, workspace: Path, queries: list[str], n: int, rng: random.Random
) -> list[float]:
    paths = resolve_paths({"CAIRN_HOME": str(home)})
    samples: list[float] = []
    with Client.connect(
        paths, agent="bench-socket", workspace=str(workspace), autostart=False
    ) as client:
        for q in queries[:WARMUP]:
            client.call("memory.search", {"query": q, "limit": 10})
        order: list[str] = []
        for _ in range(n):
            if not order:
                order = list(queries)
                rng.shuffle(order)
            t = time.perf_counter()
            client.call("memory.search", {"query": order.pop(), "limit": 10})
            samples.append((time.perf_counter() - t) * 1000)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=1000, help="timed calls (default 1000)")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the scratch CAIRN_HOME")
    args = parser.parse_args()
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    started = time.perf_counter()

    home = Path(tempfile.mkdtemp(prefix="cm", dir="/tmp"))
    workspace = home / "project"
    workspace.mkdir()
    paths = resolve_paths({"CAIRN_HOME": str(home)})
    settings = load_settings(paths.settings_file)
    print(
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; daemon, bridge and client share them"
    )
    print(f"goal: memory_search tool call p95 <= {GOAL_SEARCH_P95_MS:g} ms over stdio at 10k")

    rng = random.Random(SEED)
    corpus = unique_memories(rng, PRELOAD)
    queries = [keyword_query(rng, rng.choice(corpus)) for _ in range(QUERIES_PER_KIND)]
    queries += [natural_question(rng, rng.choice(corpus)) for _ in range(QUERIES_PER_KIND)]
    write_policy(paths.config / POLICY_FILE, all_auto(Limits(settings).kinds))
    cairn = Cairn.open(paths)
    try:
        load_s = grow(cairn, corpus, 0, PRELOAD)
    finally:
        cairn.close()
    print(f"store: {PRELOAD:,} memories written in-process in {load_s:.1f} s (CAIRN_HOME={home})")

    daemon = None
    results: dict[str, Any] = {"preload": PRELOAD, "calls": args.calls, "seed": SEED}
    try:
        daemon = start_daemon(home, paths)
        print(f"daemon: pid {daemon.proc.pid}; {len(queries)} queries, limit 10\n")
        startup, mcp, hits = anyio.run(
            over_mcp, home, workspace, queries, args.calls, random.Random(SEED)
        )
        socket_ms = over_socket(home, workspace, queries, args.calls, random.Random(SEED))
        s_mcp, s_socket = summary(mcp), summary(socket_ms)
        print(
            f"  bridge start to first answer      {startup:.2f} s "
            "(process start, imports, initialize, enrollment, connect)"
        )
        print(line("memory_search over MCP stdio", s_mcp))
        print(line("memory.search over the socket", s_socket))
        print(
            f"  the bridge's share (median)       {s_mcp['median_ms'] - s_socket['median_ms']:.3f}"
            f" ms; {hits / len(mcp):.0%} of MCP searches returned something"
        )
        met = s_mcp["p95_ms"] <= GOAL_SEARCH_P95_MS
        print(
            f"\ngoal: p95 {s_mcp['p95_ms']:.2f} ms <= {GOAL_SEARCH_P95_MS:g} ms: "
            f"{'met' if met else 'NOT met'}"
        )
        results |= {
            "startup_s": startup,
            "mcp_search": s_mcp,
            "socket_search": s_socket,
            "goal_met": met,
        }
    finally:
        if daemon is not None:
            status, seconds = daemon.stop()
            print(f"daemon stopped with SIGTERM: exit {status} after {seconds:.2f} s")
            if status != 0:
                print(f"daemon log: {tail(daemon.log)}")
        if args.keep:
            print(f"kept {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)
    print(f"wall time {time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
