"""How the spelling step (core/spelling.py) treats words a store has never seen, on real text.

    .venv/bin/python scripts/eval_spelling.py [--data DIR] [--json FILE] [--typo-words N]

A word the index lacks is either a typo of a word it holds - then an alternative should be that
word - or a correct word the store simply does not hold - then any alternative that is not a
form of the same word turns the question into another one ("comment" -> commit). Both are
measured on LoCoMo conversations loaded into throwaway stores, as three stores: the first 30
turns of conversation 0, all of conversation 0, and conversations 0-4.

- Correct words: every word of conversations 5-9 (letters only, four or more, not a stopword)
  whose term the store lacks. "Rewritten" counts those given an alternative that is not a
  form of the same word (neither term begins with the other but for two letters).
- Typos: up to N words the store holds (its most frequent terms' words, four letters or more),
  each with six typos - first two letters swapped, two middle letters swapped, a middle letter
  left out or doubled or replaced, the last letter left out - when the typo is not a term of the
  store itself. "Fixed" counts typos whose alternatives include the intended word's term.

The figures are rates of words, not of searches; `scripts/eval.py` measures what the search
results make of it. The engine config digest heads the output, as in eval.py.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval import Session, throwaway_store, workspace, write_all
from evaldata import DEFAULT_DATA, DataError, exit_status, load_locomo, require_folder

from core.model import Caller, Scope, Surface
from core.requests import WriteRequest
from core.search import EngineConfig
from core.spelling import alternatives
from core.tokenizer import TermKind, analyze, is_stop

WORD = re.compile(r"[A-Za-z]{4,}")
TYPO_KINDS = ("swap first", "swap middle", "leave out", "double", "replace", "drop last")


@dataclass
class Tally:
    words: int = 0
    counted: int = 0  # rewritten (correct words) or fixed (typos)
    examples: list[str] = field(default_factory=list)

    def share(self) -> float:
        return self.counted / self.words if self.words else 0.0


@contextmanager
def store_of(texts: Sequence[str]) -> Iterator[sqlite3.Connection]:
    """A throwaway Cairn (eval.py's) holding `texts` as project memories; its read connection."""
    with throwaway_store(Session()) as (cairn, root):
        caller = Caller(Surface.HUMAN, workspace_id=workspace(cairn, root, "ws"))
        write_all(
            cairn,
            caller,
            [WriteRequest(content=t, kind="fact", scope=Scope.PROJECT) for t in texts],
        )
        yield cairn.store.read_db.conn()


def term_of(word: str) -> str | None:
    """The index term a lone word becomes (None for stopwords and non-words)."""
    terms = [t for t in analyze(word) if not is_stop(t)]
    if len(terms) != 1 or terms[0].kind not in (TermKind.WORD, TermKind.PART):
        return None
    return terms[0].text


def same_word(a: str, b: str) -> bool:
    """Whether two terms are forms of one word: one begins with the other but for two letters."""
    short, long = sorted((a, b), key=len)
    return long.startswith(short[: max(3, len(short) - 2)])


def typos(word: str) -> dict[str, str]:
    i = len(word) // 2
    other = "x" if word[i] != "x" else "z"
    return {
        "swap first": word[1] + word[0] + word[2:],
        "swap middle": word[:i] + word[i + 1] + word[i] + word[i + 2 :],
        "leave out": word[:i] + word[i + 1 :],
        "double": word[:i] + word[i] + word[i:],
        "replace": word[:i] + other + word[i + 1 :],
        "drop last": word[:-1],
    }


def measure(
    conn: sqlite3.Connection, store_words: Counter[str], outside: set[str], typo_words: int
) -> dict[str, Tally]:
    known = {term for (term,) in conn.execute("SELECT term FROM term_docs")}
    out = {"correct": Tally(), **{kind: Tally() for kind in TYPO_KINDS}}
    for word in sorted(outside):
        term = term_of(word)
        if term is None or term in known:
            continue
        tally = out["correct"]
        tally.words += 1
        wrong = [a for a in alternatives(conn, term) if not same_word(a, term)]
        if wrong:
            tally.counted += 1
            tally.examples.append(f"{word}->{'/'.join(wrong)}")
    picked = [w for w, _ in store_words.most_common() if term_of(w) in known][:typo_words]
    for word in picked:
        intended = term_of(word)
        for kind, typo in typos(word).items():
            term = term_of(typo)
            if term is None or term in known:
                continue
            tally = out[kind]
            tally.words += 1
            found = alternatives(conn, term)
            if intended in found:
                tally.counted += 1
            elif len(tally.examples) < 6:
                tally.examples.append(f"{typo}->{'/'.join(found) or '(none)'}")
    return out


def words_of(texts: Sequence[str]) -> Counter[str]:
    return Counter(w.lower() for text in texts for w in WORD.findall(text))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the public sets")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--typo-words", type=int, default=200, help="stored words to misspell per store"
    )
    args = parser.parse_args(argv)
    try:
        require_folder(args.data)
        conversations = load_locomo(args.data)
    except DataError as e:  # until 2026-12-01 a traceback
        print(f"eval_spelling: {e}", file=sys.stderr)
        return exit_status(e)
    first, dev, held = conversations[0], conversations[:5], conversations[5:]
    outside = set(words_of([t.content for c in held for t in c.turns]))
    stores = [
        ("conversation 0, first 30 turns", [t.content for t in first.turns[:30]]),
        ("conversation 0", [t.content for t in first.turns]),
        ("conversations 0-4", [t.content for c in dev for t in c.turns]),
    ]
    print(f"engine config {EngineConfig().digest()}")
    report: dict[str, Any] = {"engine_config": EngineConfig().digest(), "stores": {}}
    print(f"{'store':32} {'memories':>8} | {'correct words':>13} {'rewritten':>9} | typos fixed")
    for name, texts in stores:
        with store_of(texts) as conn:
            tallies = measure(conn, words_of(texts), outside, args.typo_words)
        correct = tallies["correct"]
        typo_total = sum(tallies[k].words for k in TYPO_KINDS)
        typo_fixed = sum(tallies[k].counted for k in TYPO_KINDS)
        print(
            f"{name:32} {len(texts):>8} | {correct.words:>13} {correct.share():>9.1%} | "
            f"{typo_fixed}/{typo_total} {typo_fixed / max(typo_total, 1):.1%}"
        )
        print("    by typo: " + ", ".join(f"{k} {tallies[k].share():.0%}" for k in TYPO_KINDS))
        print("    rewritten, e.g.: " + ", ".join(correct.examples[:12]))
        report["stores"][name] = {
            "memories": len(texts),
            "correct_words": correct.words,
            "rewritten": correct.counted,
            "typos": {k: {"n": tallies[k].words, "fixed": tallies[k].counted} for k in TYPO_KINDS},
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
