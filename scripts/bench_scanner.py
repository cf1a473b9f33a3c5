"""Scanner benchmark: scan time on realistic 64 KiB text, on regex bait, and on short memories.

    .venv/bin/python scripts/bench_scanner.py [--runs N] [--quick] [--json PATH]

Realistic input mixes generated memories (English and Chinese, with paths, versions and
commands), real Chinese documentation paragraphs with code (knowledge-seam-zh, when
../shared/data is there) and Python source. Bait inputs repeat what the patterns key on
(prefixes, trigger words, unterminated blocks) to find super-linear behaviour; a few are also
run at 1 MiB to show that time grows linearly. Goals are printed with met / NOT met.
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import random
import sys
from collections.abc import Callable
from pathlib import Path

from benchlib import fmt, latency, unique_memories

from core import scanner

SEED = 20_250_607
KIB64 = 64 * 1024
GOAL_REALISTIC_P99_MS = 5.0
GOAL_BAIT_P99_MS = 50.0
DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
ROOT = Path(__file__).resolve().parent.parent


def realistic(rng: random.Random, size: int = KIB64) -> str:
    """Mixed English/Chinese prose and code, `size` characters."""
    memories = [m.content for m in unique_memories(rng, 4000, chinese_share=0.3)]
    docs: list[str] = []
    zh = DATA / "knowledge-seam-zh" / "distractors.json"
    if zh.exists():
        docs = [p for p in json.loads(zh.read_text(encoding="utf-8")) if isinstance(p, str)]
    code = (ROOT / "scripts" / "benchlib.py").read_text(encoding="utf-8").split("\n\n")
    parts: list[str] = []
    total = 0
    while total < size:
        roll = rng.random()
        if roll < 0.5 or not docs:
            piece = rng.choice(memories)
        elif roll < 0.8:
            piece = rng.choice(docs)
        else:
            piece = rng.choice(code)
        parts.append(piece)
        total += len(piece) + 1
    return "\n".join(parts)[:size]


def short_memory(rng: random.Random) -> str:
    """A plain memory of about 200 bytes."""
    text = ""
    while len(text.encode("utf-8")) < 200:
        text += unique_memories(rng, 1, chinese_share=0.3)[0].content + " "
    return text.encode("utf-8")[:200].decode("utf-8", "ignore")


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def baits(rng: random.Random, size: int = KIB64) -> dict[str, str]:
    b64 = base64.b64encode(rng.randbytes(size)).decode()[:size]
    pem_body = "\n".join(b64[i : i + 64] for i in range(0, 2048, 64))
    return {
        '"sk-" repeated': _repeat("sk-", size),
        '"a" * 65536': "a" * size,
        '"ignore " repeated': _repeat("ignore ", size),
        '"ignore all previous " repeated': _repeat("ignore all previous ", size),
        '"-----BEGIN " repeated': _repeat("-----BEGIN ", size),
        "PEM header + body, no END, repeated": _repeat(
            "-----BEGIN PRIVATE KEY-----\n" + pem_body + "\n", size
        ),
        "base64 run": b64,
        '"://" repeated': _repeat("://", size),
        '"a:b@" URL bait repeated': _repeat("http://a:b@", size),
        '"![](" repeated': _repeat("![](", size),
        '"![x](https://a.b/?" repeated': _repeat("![x](https://a.b/?", size),
        '"curl " repeated': _repeat("curl ", size),
        '"curl -d @" (one long line)': "curl " + _repeat("-d @x ", size - 5),
        '"secret " repeated': _repeat("secret ", size),
        '"password=" repeated': _repeat("password=", size),
        '"token: " + long value': "token: " + "A1b2" * (size // 4),
        '"Bearer " + long value': "Bearer " + "a1B2" * (size // 4),
        '"send the api key to " repeated': _repeat("send the api key to ", size),
        '"you are now " repeated': _repeat("you are now ", size),
        '"eyJ" repeated': _repeat("eyJ", size),
        '"eyJhbGciOiJIUzI1NiJ9." repeated': _repeat("eyJhbGciOiJIUzI1NiJ9.", size),
        '"system\\n" repeated': _repeat("system\n", size),
        '"rm -rf / " repeated': _repeat("run rm -rf / ", size),
        '"AKIA" repeated': _repeat("AKIA", size),
        '"把" repeated': _repeat("把", size),
        '"忽略之前" repeated': _repeat("忽略之前", size),
        '"把密钥" repeated': _repeat("把密钥", size),
        "full-width letters": _repeat("ｉｇｎｏｒｅ ｐｒｅｖｉｏｕｓ ", size),
        '"\\u200b" * 65536': "\u200b" * size,
        '"a\\u200b" repeated': _repeat("a\u200b", size),
        '"abcd\\u200b" repeated': _repeat("abcd\u200b", size),
        "zero-width every 18 chars": _repeat("abcdefghijklmnopq\u200b", size),
        "emoji ZWJ sequences": _repeat("👨\u200d👩\u200d👧 ", size),
        '"ab\\u202e" repeated': _repeat("ab\u202e", size),
        "tag characters between letters": _repeat("x\U000e0041", size),
        "ligatures (fold to 2 chars)": "ﬁ" * size,
        '"[inst]" repeated': _repeat("[inst]", size),
        '"你现在扮演" repeated': _repeat("你现在扮演", size),
        '"pwd=Abc12345 " repeated (5K secrets)': _repeat("pwd=Abc12345 ", size),
        "Chinese with full-width punctuation": _repeat("密码：请查看，（配置）！", size),
    }


def run(runs: int, quick: bool) -> dict[str, object]:
    rng = random.Random(SEED)
    report: dict[str, object] = {"python": platform.python_version(), "runs": runs}
    failures = 0

    def measure(label: str, text: str, goal: float | None, n: int) -> dict[str, float]:
        nonlocal failures
        scanner.scan(text)  # warm the caches
        stats = latency(lambda: scanner.scan(text), n)
        verdict = ""
        if goal is not None:
            ok = stats["p99_ms"] <= goal
            failures += not ok
            verdict = f"  p99 goal {goal:g} ms: {'met' if ok else 'NOT met'}"
        print(f"  {label:<40} {fmt(stats)}{verdict}")
        return stats

    print(f"\n== realistic 64 KiB (mixed English/Chinese prose + code), {runs} runs")
    texts = [realistic(rng) for _ in range(3)]
    realistic_stats = {
        f"realistic #{i}": measure(f"realistic #{i}", t, GOAL_REALISTIC_P99_MS, runs)
        for i, t in enumerate(texts)
    }
    report["realistic_64k"] = realistic_stats

    print(f"\n== short memories (~200 bytes), {runs * 10} runs")
    shorts = [short_memory(rng) for _ in range(50)]
    cycle = iter(range(10**9))
    stats = latency(lambda: scanner.scan(shorts[next(cycle) % len(shorts)]), runs * 10)
    print(f"  {'short memory':<40} {fmt(stats)}  (no goal set)")
    report["short_200b"] = stats

    bait_runs = max(5, runs // 4)
    print(f"\n== regex bait, 64 KiB each, {bait_runs} runs")
    bait_stats = {
        label: measure(label, text, GOAL_BAIT_P99_MS, bait_runs)
        for label, text in baits(rng).items()
    }
    report["bait_64k"] = bait_stats

    if not quick:
        print("\n== linearity: the four slowest baits at 64 KiB and at 1 MiB (16x the text)")
        slowest = sorted(bait_stats.items(), key=lambda kv: -kv[1]["median_ms"])[:4]
        big = baits(rng, 16 * KIB64)
        scaling: dict[str, float] = {}
        for label, small in slowest:
            large = latency(_scan_of(big[label]), 3)
            ratio = large["median_ms"] / max(small["median_ms"], 1e-6)
            scaling[label] = ratio
            print(f"  {label:<40} 1 MiB median {large['median_ms']:.1f} ms = {ratio:.1f}x")
        report["scaling_1mib_over_64k"] = scaling

    report["goals_met"] = failures == 0
    print(f"\n{'all goals met' if failures == 0 else f'{failures} goal(s) NOT met'}")
    return report


def _scan_of(text: str) -> Callable[[], object]:
    return lambda: scanner.scan(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="skip the 1 MiB linearity runs")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report = run(args.runs, args.quick)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0 if report["goals_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
