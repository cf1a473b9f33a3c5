"""The first audit rotation of a big store, seen by an agent: start the daemon on a copy of a
store whose audit table is over `audit.max_events`, and time the agent's first `hello` and its
writes while the first housekeeping round moves the excess into a rotated file.

    .venv/bin/python scripts/bench_rotation.py STORE [--max-events 200000] [--code CHECKOUT]

STORE is a CAIRN_HOME (scripts/bigstore.py builds one); it is copied, never changed. Prints the
launch to an answering socket, the socket to the first `hello` answer, the longest and median
`memory.write` an agent waited for until the round logged its rotation (each write waits for the
writer) and the same for 50 writes after it, the rotation's own log line (events, write
transactions, the longest), and the daemon's peak resident memory (VmHWM) and its memory after.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from benchlib import copy_store, start_daemon, writes_until_round

from core.client import Client

ROOT = Path(__file__).resolve().parent.parent


def status_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store", type=Path)
    parser.add_argument("--max-events", type=int, default=200_000)
    parser.add_argument(
        "--code", type=Path, default=ROOT, help="the checkout the daemon runs (default: this one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cairn-rot-") as tmp:
        home = Path(tmp) / "h"
        paths = copy_store(args.store, home, max_events=args.max_events)
        log = Path(tmp) / "serve.log"
        t0 = time.perf_counter()
        proc = start_daemon(paths, args.code, log)
        try:
            t_socket = time.perf_counter()
            client = Client.connect(paths, agent="bench", workspace=str(home), autostart=False)
            t_hello = time.perf_counter()
            waits = writes_until_round(client, proc, log)
            t_round = time.perf_counter()
            quiet: list[float] = []  # the same writes once the round is over, for comparison
            for i in range(50):
                t = time.perf_counter()
                client.call(
                    "memory.write",
                    {"content": f"bench write after {i}", "kind": "fact", "scope": "project"},
                )
                quiet.append(time.perf_counter() - t)
                time.sleep(0.02)
            client.close()
            time.sleep(2)
            peak, after = status_kb(proc.pid, "VmHWM"), status_kb(proc.pid, "VmRSS")
        finally:
            proc.terminate()
            proc.wait(30)
        said = [ln for ln in log.read_text().splitlines() if "janitor:" in ln or "rotation:" in ln]
        print(f"launch to socket          {t_socket - t0:7.2f} s")
        print(f"socket to first hello     {t_hello - t_socket:7.2f} s")
        print(f"hello to the round's log  {t_round - t_hello:7.2f} s")
        if waits:
            print(
                f"writes during the round   n={len(waits)}, longest {max(waits) * 1000:.0f} ms,"
                f" median {statistics.median(waits) * 1000:.1f} ms"
            )
        print(
            f"writes after the round    n={len(quiet)}, longest {max(quiet) * 1000:.0f} ms,"
            f" median {statistics.median(quiet) * 1000:.1f} ms"
        )
        print(f"peak RSS {peak / 1024:.0f} MB, 2 s after the round {after / 1024:.0f} MB")
        for line in said:
            print(line.strip())


if __name__ == "__main__":
    main()
