"""Where to draw the near-duplicate line: weighted term overlap on real positives and negatives.

    .venv/bin/python scripts/eval_similarity.py [--data DIR] [--json FILE]

Positives are two real wordings of one fact: in memoree-v2 each claim's statement against the
artifact it cites and against the quoted evidence, and each pair of memories the corpus says
contradicts or supersedes the other (another version of the same fact - exactly what should
become a proposed update). Negatives are real texts about other things: each claim against
every artifact it does not cite, each LoCoMo turn against the next 20 turns of its own
conversation (same people, same topics, different statements), and the Chinese set's memories
against each other and against its 500 documentation paragraphs. IDF comes from all of these
texts together, as it would from a store holding them. The script prints recall and the
false-positive rate at each threshold, and the lowest threshold whose false-positive rate per
pair stays at or under 0.05% (a write meets up to 20 candidates, so about 1% of writes at most
would be flagged "similar" wrongly).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from evaldata import (
    DEFAULT_DATA,
    DataError,
    exit_status,
    load_locomo,
    load_zh,
    read_jsonl,
    require_folder,
)

from core.ranking import idf as rsj_idf
from core.similarity import SIMILAR_THRESHOLD, terms_of, weighted_overlap

# A write is compared with up to 20 candidates of its horizon; at 0.05% per pair, at most about
# 1% of writes would be told "similar" to something unrelated.
CANDIDATES_PER_WRITE = 20
FPR_GOAL = 0.0005
THRESHOLDS = [round(0.05 * i, 2) for i in range(2, 17)]


def memoree_pairs(
    data: Path,
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]], list[str]]:
    """(kind, a, b) positives, (a, b) negatives, and every text."""
    rows = read_jsonl(data / "memoree-v2" / "seed.jsonl")
    artifacts = {
        r["label"]: f"{r.get('title', '')}\n{r['content']['data']}"
        for r in rows
        if r["entity"] == "artifact" and isinstance(r.get("content"), dict)
    }
    claims = [r for r in rows if r["entity"] == "claim"]
    positives: list[tuple[str, str, str]] = []
    negatives: list[tuple[str, str]] = []
    for claim in claims:
        cited = {e["artifact_label"] for e in claim.get("evidence", [])}
        for evidence in claim.get("evidence", []):
            if evidence["artifact_label"] in artifacts:
                positives.append(
                    ("claim-artifact", claim["statement"], artifacts[evidence["artifact_label"]])
                )
            if evidence.get("quote"):
                positives.append(("claim-quote", claim["statement"], evidence["quote"]))
        negatives.extend(
            (claim["statement"], text) for label, text in artifacts.items() if label not in cited
        )
    texts_by_label = {r["label"]: r.get("statement") or artifacts.get(r["label"], "") for r in rows}
    for r in rows:
        if r["entity"] == "relation" and r.get("relation") in ("supersedes", "contradicts"):
            a, b = texts_by_label.get(r["source_label"]), texts_by_label.get(r["target_label"])
            if a and b:
                positives.append((r["relation"], a, b))
    texts = [c["statement"] for c in claims] + list(artifacts.values())
    return positives, negatives, texts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    try:
        require_folder(args.data)
        positives, negatives, texts = memoree_pairs(args.data)
        conversations = load_locomo(args.data)
        zh = load_zh(args.data)
    except DataError as e:  # until 2026-12-01 a traceback
        print(f"eval_similarity: {e}", file=sys.stderr)
        return exit_status(e)
    for conv in conversations:
        turns = [t.content.split(": ", 1)[-1] for t in conv.turns]
        texts.extend(turns)
        for i, a in enumerate(turns):
            negatives.extend((a, b) for b in turns[i + 1 : i + 21])
    zh_texts = [m.text for m in zh.memories]
    texts.extend(zh_texts)
    texts.extend(d.text for d in zh.distractors)
    for i, a in enumerate(zh_texts):
        negatives.extend((a, b) for b in zh_texts[i + 1 :])
        negatives.extend((a, d.text) for d in zh.distractors)

    df: Counter[str] = Counter()
    for text in texts:
        df.update(terms_of(text))
    total = len(texts)
    cache: dict[str, float] = {}

    def idf(term: str) -> float:
        value = cache.get(term)
        if value is None:
            value = cache[term] = rsj_idf(df.get(term, 0), total)
        return value

    def scores(pairs: Sequence[tuple[str, str]], fn: Callable[[str], float]) -> list[float]:
        return [weighted_overlap(terms_of(a), terms_of(b), fn) for a, b in pairs]

    pos = scores([(a, b) for _, a, b in positives], idf)
    neg = scores(negatives, idf)
    kinds = Counter(k for k, _, _ in positives)
    print(
        f"texts for IDF: {total:,}; positives: {len(pos)} ({dict(kinds)}); negatives: {len(neg):,}"
    )
    print(f"{'threshold':>9} {'recall':>8} {'false pos':>10} {'FP rate':>8}")
    rows: list[dict[str, Any]] = []
    for t in THRESHOLDS:
        recall = sum(s >= t for s in pos) / len(pos)
        fp = sum(s >= t for s in neg)
        rate = fp / len(neg)
        rows.append({"threshold": t, "recall": recall, "false_positives": fp, "fp_rate": rate})
        mark = "  <- in use" if math.isclose(t, SIMILAR_THRESHOLD) else ""
        print(f"{t:>9.2f} {recall:>8.3f} {fp:>10,} {rate:>8.4f}{mark}")
    chosen = next((r for r in rows if r["fp_rate"] <= FPR_GOAL), rows[-1])
    print(
        f"lowest threshold with a false-positive rate <= {FPR_GOAL:.2%} per pair "
        f"(<= {FPR_GOAL * CANDIDATES_PER_WRITE:.0%} of writes): {chosen['threshold']:.2f} "
        f"(recall {chosen['recall']:.3f}, {chosen['false_positives']} false positives)"
    )
    by_kind = {
        kind: sum(
            s >= SIMILAR_THRESHOLD for (k, _, _), s in zip(positives, pos, strict=True) if k == kind
        )
        / n
        for kind, n in kinds.items()
    }
    print(f"in use: {SIMILAR_THRESHOLD:.2f}; recall by pair kind: {by_kind}")
    if args.json:
        args.json.write_text(
            json.dumps({"rows": rows, "chosen": chosen, "in_use": SIMILAR_THRESHOLD}, indent=2),
            encoding="utf-8",
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
