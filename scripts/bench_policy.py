"""Reading a capture policy with many per-agent sections: the time `parse_policy` takes for a
`policy.toml` of N agents (each `aN = { extracted = "off" }`), median of runs, and how it grows
with N - a lookup per agent that read the file from its start made it quadratic until
2026-12-01 (1,000 agents 3.2 s, 4,000 agents 55 s).

    .venv/bin/python scripts/bench_policy.py [--agents 1000 3000 10000] [--runs 5]

The figures are in docs/performance.md ("Capture policy").
"""

from __future__ import annotations

import argparse
import statistics
import time

from core.model import BUILTIN_KINDS
from core.policy import DEFAULT_TEXT, parse_policy


def policy_text(agents: int) -> str:
    lines = "".join(f'a{i} = {{ extracted = "off" }}\n' for i in range(agents))
    return DEFAULT_TEXT + "\n[agents]\n" + lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, nargs="+", default=[1000, 3000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    previous: tuple[int, float] | None = None
    for n in args.agents:
        text = policy_text(n)
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            policy = parse_policy(text, BUILTIN_KINDS)
            times.append(time.perf_counter() - started)
            assert len(policy.agents) == n
        median = statistics.median(times)
        growth = ""
        if previous is not None:
            ratio = median / previous[1]
            growth = f"  x{ratio:.1f} for x{n / previous[0]:.1f} agents"
        print(
            f"{n:>6} agents ({len(text.encode()) / 1024:.0f} KB): median {median * 1000:.0f} ms"
            f" of {args.runs}, max {max(times) * 1000:.0f} ms{growth}"
        )
        previous = (n, median)


if __name__ == "__main__":
    main()
