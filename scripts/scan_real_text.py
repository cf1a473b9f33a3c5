"""False-positive check of the scanner on real text: LoCoMo turns and Chinese documentation.

    .venv/bin/python scripts/scan_real_text.py [--data DIR] [--json PATH] [--show N]

Scans the 5,882 LoCoMo conversation turns and the 500 knowledge-seam-zh documentation paragraphs
(read in place from ../shared/data, never copied) - the goals are judged on these - and, as a
harder extra, the paragraphs of the design documents in ../shared/seeds, which discuss prompt
injection, secrets and scanners at length. None of these texts is an attack or holds a
secret, so every finding is a false positive for a person to judge: the script prints counts per
family and rule and the hits themselves (rule + a 60-character excerpt).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import scanner

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
GOAL_SECRETS = 0
GOAL_INJECTION_SHARE = 0.005  # injection hits / texts scanned
_SESSION = re.compile(r"session_\d+")
GOAL_SETS = ("locomo-turns", "zh-docs")  # design-docs is reported, not held to the goals


def locomo_turns(data: Path) -> list[str]:
    conversations = json.loads((data / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    return [
        turn["text"]
        for conversation in conversations
        for key, turns in conversation["conversation"].items()
        if _SESSION.fullmatch(key) and isinstance(turns, list)
        for turn in turns
    ]


def design_paragraphs(seeds: Path) -> list[str]:
    """Paragraphs of the design documents next to the data: prose ABOUT prompt injection,
    secrets and scanners - the documentary mentions the injection rules must leave alone."""
    return [
        p.strip()
        for path in sorted(seeds.glob("*.txt"))
        for p in path.read_text(encoding="utf-8").split("\n\n")
        if p.strip()
    ]


def zh_paragraphs(data: Path) -> list[str]:
    paragraphs = json.loads(
        (data / "knowledge-seam-zh" / "distractors.json").read_text(encoding="utf-8")
    )
    return [p for p in paragraphs if isinstance(p, str)]


def excerpt(text: str, finding: scanner.Finding, width: int = 60) -> str:
    """About `width` characters around the finding, on one line."""
    pad = max(0, (width - (finding.end - finding.start)) // 2)
    start = max(0, finding.start - pad)
    return text[start : start + width].replace("\n", " ")


def run(sets: dict[str, list[str]], show: int) -> dict[str, Any]:
    report: dict[str, Any] = {"sets": {}}
    for name, texts in sets.items():
        families: Counter[str] = Counter()
        rules: Counter[str] = Counter()
        texts_hit: Counter[str] = Counter()  # texts with at least one finding, per family
        hits: list[dict[str, str]] = []
        for text in texts:
            findings = scanner.scan(text)
            for family in {f.family.value for f in findings}:
                texts_hit[family] += 1
            for f in findings:
                families[f.family.value] += 1
                rules[f.rule] += 1
                hits.append({"rule": f.rule, "excerpt": excerpt(text, f)})
        n = len(texts)
        report["sets"][name] = {
            "texts": n,
            "findings_by_family": {fam.value: families[fam.value] for fam in scanner.Family},
            "texts_with_finding_by_family": {
                fam.value: texts_hit[fam.value] for fam in scanner.Family
            },
            "injection_share": texts_hit["injection"] / n if n else 0.0,
            "by_rule": dict(rules.most_common()),
            "hits": hits,
        }
        print(f"\n== {name}: {n} texts scanned")
        for fam in scanner.Family:
            print(
                f"  {fam.value:<13} {families[fam.value]:>4} findings in "
                f"{texts_hit[fam.value]:>4} texts ({texts_hit[fam.value] / n:.2%})"
            )
        for rule, count in rules.most_common():
            print(f"    {rule:<28} {count}")
        for hit in hits[:show]:
            print(f"    - {hit['rule']:<24} | {hit['excerpt']}")
        if len(hits) > show:
            print(f"    ... {len(hits) - show} more (see --json)")
    goal_sets = [report["sets"][name] for name in GOAL_SETS if name in report["sets"]]
    total = sum(s["texts"] for s in goal_sets)
    secrets = sum(s["texts_with_finding_by_family"]["secret"] for s in goal_sets)
    injection = sum(s["texts_with_finding_by_family"]["injection"] for s in goal_sets)
    share = injection / total if total else 0.0
    report["total"] = {"texts": total, "texts_with_secret": secrets, "injection_share": share}
    print(f"\n== goal sets ({', '.join(GOAL_SETS)}): {total} texts")
    ok = "met" if secrets <= GOAL_SECRETS else "NOT met"
    print(f"  texts with a secret finding: {secrets} (goal {GOAL_SECRETS}: {ok})")
    ok = "met" if share < GOAL_INJECTION_SHARE else "NOT met"
    print(f"  injection share: {share:.3%} of texts (goal < {GOAL_INJECTION_SHARE:.1%}: {ok})")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, help="write the full report (every hit) here")
    parser.add_argument("--show", type=int, default=25, help="hits to print per set")
    args = parser.parse_args(argv)
    sets = {"locomo-turns": locomo_turns(args.data), "zh-docs": zh_paragraphs(args.data)}
    seeds = args.data.parent / "seeds"
    if seeds.is_dir():
        sets["design-docs"] = design_paragraphs(seeds)
    report = run(sets, args.show)
    if args.json:
        args.json.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
        print(f"\nreport written to {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
