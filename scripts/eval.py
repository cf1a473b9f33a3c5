"""Retrieval-quality evaluation of Cairn on public data, through the public service API only.

    .venv/bin/python scripts/eval.py [--only locomo,memoree,zh] [--split dev|heldout|all]
        [--data DIR] [--limit-locomo N] [--json FILE] [--show-misses]

Sets (read in place from ../shared/data, never copied): LoCoMo (one throwaway store per
conversation, one memory per turn), memoree-v2 (two real project workspaces, relations as
supersede / contradiction calls) and knowledge-seam-zh (human and hard query sets, with frozen
query expansions as caller variants and frozen enrichment as write-time keywords). The engine
sees memories and queries only; every dataset-specific choice lives here.

Development / held-out: LoCoMo conversations 0-4 are dev and 5-9 held-out; for memoree and each
zh query file, the first half of the cases in file order is dev and the rest held-out.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchlib import percentile
from evaldata import (
    DEFAULT_DATA,
    Conversation,
    DataError,
    ZhMemory,
    ZhQuery,
    exit_status,
    load_locomo,
    load_memoree,
    load_zh,
    require_folder,
)

from core.app import Cairn
from core.errors import CairnError
from core.model import Caller, Scope, Surface, WriteStatus
from core.paths import Paths
from core.policy import POLICY_FILE, all_auto
from core.policy_file import write_policy
from core.requests import WriteRequest
from core.search import EngineConfig, Horizon, SearchRequest, SearchResult
from core.settings import Settings
from core.validation import Limits

SPLITS = ("dev", "heldout", "all")
DATASETS = ("locomo", "memoree", "zh")
LIMIT = 10
LOCOMO_DEV_CONVERSATIONS = range(5)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
RANK_METRICS = ("hit@1", "hit@5", "hit@10", "recall@10", "mrr@10", "ndcg@10", "session_hit@1")

# Memoree's long documents are ~110 KB; the default 32 KB content limit would refuse them.
SETTINGS = Settings.defaults().with_values(
    search__agents_may_broaden=True, limits__max_content_bytes=262_144
)

# Published numbers on the same setups (../shared/data/README.md, knowledge-seam-zh/EXPERIMENTS.md)
LOCOMO_REFERENCE = "plain BM25: hit@10 0.577, MRR@10 0.365; BM25 session hit@1 ~0.64"
MEMOREE_REFERENCE = "plain BM25: hit@1 0.83 overall, paraphrase 0.6, typo 0.7"
ZH_REFERENCE: dict[tuple[str, str], float] = {
    ("human", "plain"): 0.65,
    ("human", "expanded"): 0.82,
    ("human", "both"): 0.88,
    ("hard-12", "plain"): 0.07,
    ("hard-12", "expanded"): 0.36,
    ("hard-12", "both"): 0.64,
    ("hard-512", "plain"): 0.07,
    ("hard-512", "enriched"): 0.21,
    ("hard-512", "expanded"): 0.21,
    ("hard-512", "both"): 0.50,
}


class EvalError(Exception):
    """The evaluation could not be carried out (a write refused, a config that moved)."""


@dataclass
class Session:
    """What every store of one run shares: the engine config seen, and search latencies."""

    digest: str | None = None
    latencies: dict[str, list[float]] = field(default_factory=dict)
    stores: int = 0
    overrides: dict[str, float] = field(default_factory=dict)

    def see(self, digest: str) -> None:
        if self.digest is None:
            self.digest = digest
        elif digest != self.digest:
            raise EvalError(f"engine config changed between stores: {self.digest} -> {digest}")

    def search(
        self, dataset: str, cairn: Cairn, caller: Caller, req: SearchRequest
    ) -> SearchResult:
        t0 = time.perf_counter()
        result = cairn.search.search(caller, req, count_recall=False)
        self.latencies.setdefault(dataset, []).append((time.perf_counter() - t0) * 1000)
        if result.config and result.config != self.digest:
            raise EvalError(f"a search ran with config {result.config}, not {self.digest}")
        return result


@contextmanager
def throwaway_store(session: Session) -> Iterator[tuple[Cairn, Path]]:
    """A fresh Cairn in its own /tmp directory (also the home of any workspace directories),
    closed and deleted afterwards."""
    root = Path(tempfile.mkdtemp(prefix="ce", dir="/tmp"))
    try:
        paths = Paths(data=root / "d", config=root / "c", state=root / "s", runtime=root / "r")
        # Every write is stored (no review): the evaluation measures retrieval, not the queue.
        write_policy(paths.config / POLICY_FILE, all_auto(Limits(SETTINGS).kinds))
        cairn = Cairn.open(paths, settings=SETTINGS)
        if session.overrides:  # --set: an engine experiment, reported under its own hash
            knobs: dict[str, Any] = dict(session.overrides)
            cairn.search.config = dataclasses.replace(cairn.search.config, **knobs)
        try:
            session.see(cairn.search.config.digest())
            session.stores += 1
            yield cairn, root
        finally:
            cairn.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def workspace(cairn: Cairn, root: Path, name: str) -> str:
    directory = root / "ws" / name
    directory.mkdir(parents=True, exist_ok=True)
    return cairn.workspaces.resolve(str(directory)).id


def agent(workspace_id: str) -> Caller:
    return Caller(Surface.AGENT, agent="eval", verified=True, workspace_id=workspace_id)


def write_all(cairn: Cairn, caller: Caller, reqs: Sequence[WriteRequest]) -> list[str]:
    """Write in one transaction; the memory id of each request (an exact duplicate answers with
    the id it already has)."""
    ids: list[str] = []
    for req, result in zip(reqs, cairn.memories.write_many(caller, reqs), strict=True):
        if isinstance(result, CairnError):
            raise EvalError(f"write refused ({result.code.label}: {result}): {req.content[:60]!r}")
        if result.status is not WriteStatus.STORED or result.id is None:
            raise EvalError(f"write not stored ({result.status.value}): {req.content[:60]!r}")
        ids.append(result.id)
    return ids


def part_of(index: int, total: int) -> str:
    """First half (rounded up) of a file's cases is dev, the rest held-out."""
    return "dev" if index < (total + 1) // 2 else "heldout"


def wanted(split: str, part: str) -> bool:
    return split in ("all", part)


def splits_for(split: str) -> tuple[str, ...]:
    return SPLITS if split == "all" else (split,)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def share(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def rank_metrics(ranked: Sequence[str], gold: set[str]) -> dict[str, float]:
    """hit@k, recall@10, MRR@10 and nDCG@10 of one ranked list of memory ids."""
    top = list(ranked[:LIMIT])
    first = next((i for i, m in enumerate(top, 1) if m in gold), None)
    dcg = sum(1 / math.log2(i + 1) for i, m in enumerate(top, 1) if m in gold)
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(gold), LIMIT) + 1))
    return {
        "hit@1": float(first == 1),
        "hit@5": float(first is not None and first <= 5),
        "hit@10": float(first is not None),
        "recall@10": len(gold & set(top)) / len(gold),
        "mrr@10": 1 / first if first else 0.0,
        "ndcg@10": dcg / ideal if ideal else 0.0,
    }


# -- LoCoMo ----------------------------------------------------------------------------------


def locomo_conversation(
    session: Session, conv: Conversation, part: str, limit: int | None
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    writer = Caller.human()
    with throwaway_store(session) as (cairn, root):
        caller = agent(workspace(cairn, root, "conversation"))
        reqs = [WriteRequest(content=t.content, kind="fact", scope=Scope.USER) for t in conv.turns]
        memory_of = dict(
            zip((t.dia_id for t in conv.turns), write_all(cairn, writer, reqs), strict=True)
        )
        session_of: dict[str, int] = {}
        for turn in conv.turns:
            session_of.setdefault(memory_of[turn.dia_id], turn.session)
        for q in conv.questions:
            if limit is not None and q.index >= limit:
                continue
            result = session.search(
                "locomo", cairn, caller, SearchRequest(query=q.question, limit=LIMIT)
            )
            ranked = [h.memory.id for h in result.hits]
            record: dict[str, Any] = {
                "split": part,
                "category": q.category,
                "presence": result.presence.value,
                "pinned": any(h.pinned_by for h in result.hits),
            }
            if q.category in CATEGORIES:
                gold = {memory_of[d] for d in q.gold}
                record.update(rank_metrics(ranked, gold))
                gold_sessions = {session_of[m] for m in gold}
                top_session = session_of.get(ranked[0]) if ranked else None
                record["session_hit@1"] = float(top_session in gold_sessions)
            records.append(record)
    return records


def locomo_summary(records: list[dict[str, Any]], split: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in splits_for(split):
        rows = [r for r in records if name == "all" or r["split"] == name]
        answerable = [r for r in rows if r["category"] in CATEGORIES]
        adversarial = [r for r in rows if r["category"] == 5]
        block: dict[str, Any] = {}
        groups = [
            (label, [r for r in answerable if r["category"] == c])
            for c, label in CATEGORIES.items()
        ]
        for label, group in [*groups, ("overall", answerable)]:
            block[label] = {"n": len(group)} | {
                m: mean([r[m] for r in group]) for m in RANK_METRICS
            }
        block["presence"] = {
            "adversarial_n": len(adversarial),
            "adversarial_strong": share([r["presence"] == "strong" for r in adversarial]),
            "adversarial_none": share([r["presence"] == "none" for r in adversarial]),
            "answerable_n": len(answerable),
            "answerable_strong": share([r["presence"] == "strong" for r in answerable]),
            "answerable_none": share([r["presence"] == "none" for r in answerable]),
        }
        pinned = [r for r in answerable if r["pinned"]]
        unpinned = [r for r in answerable if not r["pinned"]]
        block["exact_pins"] = {
            "answerable_with_pins": share([r["pinned"] for r in answerable]),
            "hit@10_with_pins": mean([r["hit@10"] for r in pinned]),
            "hit@10_without_pins": mean([r["hit@10"] for r in unpinned]),
        }
        out[name] = block
    return out


def eval_locomo(session: Session, data: Path, split: str, limit: int | None) -> dict[str, Any]:
    conversations = load_locomo(data)
    records: list[dict[str, Any]] = []
    used: list[Conversation] = []
    for conv in conversations:
        part = "dev" if conv.index in LOCOMO_DEV_CONVERSATIONS else "heldout"
        if not wanted(split, part):
            continue
        used.append(conv)
        records += locomo_conversation(session, conv, part, limit)
        print(f"  locomo conversation {conv.index}: {len(conv.turns)} turns", file=sys.stderr)
    return {
        "conversations": len(used),
        "turns": sum(len(c.turns) for c in used),
        "sessions": sum(len({t.session for t in c.turns}) for c in used),
        "answerable_questions": sum(1 for r in records if r["category"] in CATEGORIES),
        "adversarial_questions": sum(1 for r in records if r["category"] == 5),
        "dropped_without_valid_evidence": sum(
            1 for c in used for i in c.dropped if limit is None or i < limit
        ),
        "splits": locomo_summary(records, split),
    }


# -- memoree-v2 ------------------------------------------------------------------------------


def eval_memoree(session: Session, data: Path, split: str) -> dict[str, Any]:
    memories, relations, cases = load_memoree(data)
    human = Caller.human()
    records: list[dict[str, Any]] = []
    with throwaway_store(session) as (cairn, root):
        projects = sorted({m.project for m in memories} | {c.project for c in cases})
        ws = {p: workspace(cairn, root, p) for p in projects}
        ids: dict[str, str] = {}
        for project in projects:
            batch = [m for m in memories if m.project == project]
            reqs = [
                WriteRequest(content=m.content, kind="fact", scope=Scope.PROJECT) for m in batch
            ]
            writer = Caller(Surface.HUMAN, workspace_id=ws[project])
            ids.update(zip((m.label for m in batch), write_all(cairn, writer, reqs), strict=True))
        for rel in relations:
            if rel.relation == "contradicts":
                cairn.memories.mark_contradiction(
                    human, ids[rel.source], ids[rel.target], note=rel.label
                )
            elif rel.relation == "supersedes":
                cairn.memories.supersede(
                    human, ids[rel.target], by_id=ids[rel.source], reason=rel.label
                )
            else:
                raise EvalError(f"memoree relation {rel.label}: unknown kind {rel.relation!r}")
        label_of = {v: k for k, v in ids.items()}
        for i, case in enumerate(cases):
            part = part_of(i, len(cases))
            if not wanted(split, part):
                continue
            req = SearchRequest(
                query=case.query,
                limit=LIMIT,
                horizon=Horizon.ALL if case.broaden else Horizon.DEFAULT,
            )
            result = session.search("memoree", cairn, agent(ws[case.project]), req)
            labels = [label_of.get(h.memory.id, h.memory.id) for h in result.hits]
            disputed = {label_of.get(h.memory.id, "") for h in result.hits if h.disputed_with}
            own = ws[case.project]
            foreign = [
                label_of.get(h.memory.id, h.memory.id)
                for h in result.hits
                if h.memory.workspace_id not in (None, own)
            ]
            record: dict[str, Any] = {
                "case_id": case.case_id,
                "slice": case.slice,
                "split": part,
                "answerable": case.answerable and bool(case.relevant),
                "no_answer": case.expected_presence == "none" and not case.answerable,
                "expected_presence": case.expected_presence,
                "presence": result.presence.value,
                "top": labels[:5],
                "forbidden_returned": [x for x in labels if x in case.forbidden],
                # the bait an agent would take: a forbidden memory before every relevant one
                "forbidden_first": [
                    x
                    for x in labels[
                        : next((i for i, y in enumerate(labels) if y in case.relevant), len(labels))
                    ]
                    if x in case.forbidden
                ],
                "has_forbidden": bool(case.forbidden),
                "broadened": case.broaden,
                "other_workspace": foreign,
            }
            if record["answerable"]:
                relevant = set(case.relevant)
                first = next((r for r, x in enumerate(labels, 1) if x in relevant), None)
                record["rank"] = first
                record["hit@1"] = float(first == 1)
                record["hit@5"] = float(first is not None and first <= 5)
            if case.conflicts:
                record["conflicts_surfaced"] = all(
                    a in disputed and b in disputed for a, b in case.conflicts
                )
            records.append(record)
    return {
        "memories": len(memories),
        "projects": projects,
        "relations": [f"{r.source} {r.relation} {r.target}" for r in relations],
        "cases": len(cases),
        "dev_cases": (len(cases) + 1) // 2,
        "splits": memoree_summary(records, split),
        "per_case": records,
    }


def memoree_summary(records: list[dict[str, Any]], split: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    slices = list(dict.fromkeys(r["slice"] for r in records))
    for name in splits_for(split):
        rows = [r for r in records if name == "all" or r["split"] == name]
        answerable = [r for r in rows if r["answerable"]]
        block: dict[str, Any] = {"slices": {}}
        for s in slices:
            group = [r for r in answerable if r["slice"] == s]
            block["slices"][s] = {
                "cases": sum(1 for r in rows if r["slice"] == s),
                "n": len(group),
                "hit@1": mean([r["hit@1"] for r in group]),
                "hit@5": mean([r["hit@5"] for r in group]),
            }
        block["overall"] = {
            "cases": len(rows),
            "n": len(answerable),
            "hit@1": mean([r["hit@1"] for r in answerable]),
            "hit@5": mean([r["hit@5"] for r in answerable]),
        }
        no_answer = [r for r in rows if r["no_answer"]]
        conflicts = [r["conflicts_surfaced"] for r in rows if "conflicts_surfaced" in r]
        block["forbidden"] = {
            "cases_with_forbidden": sum(1 for r in rows if r["has_forbidden"]),
            # a violation: a forbidden memory ranked above every relevant one (or returned for a
            # case with no answer) - what an agent taking the first result would be misled by
            "violations": sum(1 for r in rows if r["forbidden_first"]),
            # lexical bait returned below the answer: reported, not a violation
            "returned_below_answer": sum(
                1 for r in rows if r["forbidden_returned"] and not r["forbidden_first"]
            ),
            "forbidden_ids_returned": sum(len(r["forbidden_returned"]) for r in rows),
            # another project's memory in an unbroadened search: scope isolation broken
            "scope_leaks": sum(1 for r in rows if r["other_workspace"] and not r["broadened"]),
        }
        block["presence"] = {
            "no_answer_n": len(no_answer),
            "no_answer_none": share([r["presence"] == "none" for r in no_answer]),
            "answerable_n": len(answerable),
            "answerable_found": share([r["presence"] != "none" for r in answerable]),
        }
        block["conflicts"] = {"n": len(conflicts), "surfaced": share(conflicts)}
        out[name] = block
    return out


# -- knowledge-seam-zh -----------------------------------------------------------------------

ZH_ARMS = ("plain", "expanded", "enriched", "both")


@dataclass(frozen=True)
class ZhSet:
    name: str
    memories: tuple[ZhMemory, ...]
    queries: tuple[ZhQuery, ...]
    variants: dict[str, tuple[str, ...]]


def zh_store_run(
    session: Session,
    zh_set: ZhSet,
    enrichment: dict[str, str] | None,
    arms: tuple[str, ...],
    split: str,
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    with throwaway_store(session) as (cairn, root):
        caller = agent(workspace(cairn, root, "zh"))
        reqs = [
            WriteRequest(
                content=m.text,
                kind="fact",
                scope=Scope.USER,
                keywords=(enrichment or {}).get(m.id) if not m.distractor else None,
            )
            for m in zh_set.memories
        ]
        ids = write_all(cairn, Caller.human(), reqs)
        label_of: dict[str, ZhMemory] = {}
        for m, mid in zip(zh_set.memories, ids, strict=True):
            label_of.setdefault(mid, m)
        memory_of = {m.id: mid for m, mid in zip(zh_set.memories, ids, strict=True)}
        for arm in arms:
            for i, q in enumerate(zh_set.queries):
                part = part_of(i, len(zh_set.queries))
                if not wanted(split, part):
                    continue
                variants = zh_set.variants.get(q.id, ()) if arm in ("expanded", "both") else ()
                req = SearchRequest(query=q.text, limit=LIMIT, variants=variants)
                result = session.search("zh", cairn, caller, req)
                top = [label_of[h.memory.id] for h in result.hits if h.memory.id in label_of]
                record: dict[str, Any] = {
                    "set": zh_set.name,
                    "arm": arm,
                    "query": q.id,
                    "split": part,
                    "target": q.target,
                    "presence": result.presence.value,
                    "top": [m.id for m in top[:3]],
                }
                if q.target is not None:
                    target = memory_of[q.target]
                    ranked = [h.memory.id for h in result.hits]
                    rank = ranked.index(target) + 1 if target in ranked else None
                    record["rank"] = rank
                    record["hit@1"] = float(rank == 1)
                    record["mrr@10"] = 1 / rank if rank else 0.0
                else:
                    record["top1_empty_or_distractor"] = not top or top[0].distractor
                records.append(record)
    return records


def eval_zh(session: Session, data: Path, split: str) -> dict[str, Any]:
    zh = load_zh(data)
    sets = [
        ZhSet("human", zh.memories + zh.distractors, zh.human_queries, zh.human_variants),
        ZhSet("hard-12", zh.hard_memories, zh.hard_queries, zh.hard_variants),
        ZhSet("hard-512", zh.hard_memories + zh.distractors, zh.hard_queries, zh.hard_variants),
    ]
    records: list[dict[str, Any]] = []
    for zh_set in sets:
        records += zh_store_run(session, zh_set, None, ("plain", "expanded"), split)
        records += zh_store_run(session, zh_set, zh.enrichment, ("enriched", "both"), split)
    out: dict[str, Any] = {
        "sets": {
            s.name: {
                "memories": len(s.memories),
                "distinct_texts": len({m.text for m in s.memories}),
                "queries": len(s.queries),
                "with_target": sum(1 for q in s.queries if q.target is not None),
                "dev_queries": (len(s.queries) + 1) // 2,
            }
            for s in sets
        },
        "splits": {},
        "per_query": records,
    }
    for name in splits_for(split):
        block: dict[str, Any] = {}
        for zh_set in sets:
            for arm in ZH_ARMS:
                rows = [
                    r
                    for r in records
                    if r["set"] == zh_set.name
                    and r["arm"] == arm
                    and (name == "all" or r["split"] == name)
                ]
                targeted = [r for r in rows if r["target"] is not None]
                none = [r for r in rows if r["target"] is None]
                block[f"{zh_set.name}/{arm}"] = {
                    "n": len(targeted),
                    "hits@1": int(sum(r["hit@1"] for r in targeted)),
                    "recall@1": mean([r["hit@1"] for r in targeted]),
                    "mrr@10": mean([r["mrr@10"] for r in targeted]),
                    "none_n": len(none),
                    "none_presence_none": share([r["presence"] == "none" for r in none]),
                    "none_top1_empty_or_distractor": share(
                        [r["top1_empty_or_distractor"] for r in none]
                    ),
                    "seed000": ZH_REFERENCE.get((zh_set.name, arm)),
                }
        out["splits"][name] = block
    return out


# -- output ----------------------------------------------------------------------------------


def f3(value: float | None) -> str:
    return "    -" if value is None else f"{value:5.3f}"


def pct(value: float | None) -> str:
    return "   -" if value is None else f"{value * 100:3.0f}%"


def frac(k: int, n: int) -> str:
    return f"{k}/{n}" if n else "-"


def print_locomo(res: dict[str, Any]) -> None:
    print(
        f"\nLoCoMo - {res['conversations']} conversations, {res['turns']:,} turns, "
        f"{res['sessions']} sessions; {res['answerable_questions']:,} answerable questions "
        f"(cat 1-4), {res['adversarial_questions']} adversarial (cat 5); "
        f"{res['dropped_without_valid_evidence']} dropped for lack of valid evidence"
    )
    print("dev = conversations 0-4, held-out = 5-9; limit 10; turn-level unless noted")
    head = f"{'split':8} {'category':12} {'n':>5}"
    head += "".join(f" {m:>8}" for m in ("hit@1", "hit@5", "hit@10", "R@10", "MRR@10", "nDCG@10"))
    print(head + f" {'sess@1':>8}")
    for name, block in res["splits"].items():
        for label in [*CATEGORIES.values(), "overall"]:
            row = block[label]
            line = f"{name:8} {label:12} {row['n']:>5}"
            print(line + "".join(f" {f3(row[m]):>8}" for m in RANK_METRICS))
    print("presence 'strong' (should be low for cat 5, the unanswerable questions):")
    for name, block in res["splits"].items():
        p = block["presence"]
        print(
            f"  {name:8} cat 5: {pct(p['adversarial_strong'])} strong, "
            f"{pct(p['adversarial_none'])} none (n={p['adversarial_n']});  "
            f"cat 1-4: {pct(p['answerable_strong'])} strong, "
            f"{pct(p['answerable_none'])} none (n={p['answerable_n']})"
        )
    print("exact-symbol pins (a result carries `pinned_by`) on answerable questions:")
    for name, block in res["splits"].items():
        e = block["exact_pins"]
        print(
            f"  {name:8} pins fired on {pct(e['answerable_with_pins'])} of questions; hit@10 "
            f"{f3(e['hit@10_with_pins'])} with pins, {f3(e['hit@10_without_pins'])} without"
        )
    print(f"reference: {LOCOMO_REFERENCE}")


def print_memoree(res: dict[str, Any], show_misses: bool) -> None:
    print(
        f"\nmemoree-v2 - {res['memories']} memories in projects {', '.join(res['projects'])}; "
        f"relations: {'; '.join(res['relations'])}; {res['cases']} cases "
        f"(dev = first {res['dev_cases']})"
    )
    names = list(res["splits"])
    print(f"{'slice':22}" + "".join(f" | {n:>7} {'n':>3} {'hit@1':>5} {'hit@5':>5}" for n in names))
    blocks = res["splits"]
    slices = list(blocks[names[-1]]["slices"])
    for s in [*slices, "overall"]:
        line = f"{s:22}"
        for n in names:
            row = blocks[n]["slices"].get(s) if s != "overall" else blocks[n]["overall"]
            if row is None or not row["n"]:
                line += f" | {'':>7} {(row or {}).get('n', 0):>3} {'-':>5} {'-':>5}"
            else:
                line += f" | {'':>7} {row['n']:>3} {f3(row['hit@1'])} {f3(row['hit@5'])}"
        print(line)
    for n in names:
        b = blocks[n]
        fb, pr, cf = b["forbidden"], b["presence"], b["conflicts"]
        none_k = round((pr["no_answer_none"] or 0) * pr["no_answer_n"])
        found_k = round((pr["answerable_found"] or 0) * pr["answerable_n"])
        print(
            f"  {n:8} forbidden violations {fb['violations']} "
            f"(of {fb['cases_with_forbidden']} cases with forbidden ids; "
            f"{fb['returned_below_answer']} more returned below the answer), scope leaks "
            f"{fb['scope_leaks']}; presence: "
            f"no-answer -> none {frac(none_k, pr['no_answer_n'])}, answerable -> not none "
            f"{frac(found_k, pr['answerable_n'])}; conflicts surfaced "
            f"{frac(round((cf['surfaced'] or 0) * cf['n']), cf['n'])}"
        )
    odd = [
        r["case_id"]
        for r in res["per_case"]
        if r["answerable"] and r["expected_presence"] == "none"
    ]
    if odd:
        print(
            f"  note: {', '.join(odd)} expect presence 'none' in memoree's claim-only sense but "
            "are answerable from a raw artifact; counted as answerable here"
        )
    print(f"reference: {MEMOREE_REFERENCE}")
    if show_misses:
        for r in res["per_case"]:
            miss = r["answerable"] and r["hit@1"] < 1
            bad_presence = (r["no_answer"] and r["presence"] != "none") or (
                r["answerable"] and r["presence"] == "none"
            )
            if miss or bad_presence or r["forbidden_returned"]:
                print(
                    f"    {r['case_id']:32} rank {r.get('rank')!s:4} presence {r['presence']:6}"
                    f" forbidden {r['forbidden_returned']} top {r['top'][:3]}"
                )


def print_zh(res: dict[str, Any], show_misses: bool) -> None:
    sets = res["sets"]
    print(
        "\nknowledge-seam-zh - recall@1 on queries with a target; "
        + "; ".join(
            f"{k}: {v['memories']} memories ({v['distinct_texts']} distinct), "
            f"{v['queries']} queries, dev = first {v['dev_queries']}"
            for k, v in sets.items()
        )
    )
    print(
        "arms: expanded = frozen expansions as variants; enriched = frozen enrichment as keywords"
    )
    names = list(res["splits"])
    print(
        f"{'set/arm':20}" + "".join(f" {n:>13}" for n in names) + f" {'MRR@10':>7} {'seed000':>8}"
    )
    last = res["splits"][names[-1]]
    for key in last:
        line = f"{key:20}"
        for n in names:
            row = res["splits"][n][key]
            line += f" {frac(row['hits@1'], row['n']):>6} {pct(row['recall@1']):>6}"
        line += f" {f3(last[key]['mrr@10']):>7} {pct(last[key]['seed000']):>8}"
        print(line)
    print("human none-queries (h1, h4, h5; all in dev): presence none / top-1 empty or distractor")
    for key, row in last.items():
        if row["none_n"]:
            k1 = round((row["none_presence_none"] or 0) * row["none_n"])
            k2 = round((row["none_top1_empty_or_distractor"] or 0) * row["none_n"])
            print(f"  {key:20} {frac(k1, row['none_n'])} / {frac(k2, row['none_n'])}")
    if show_misses:
        for r in res["per_query"]:
            if r["target"] is not None and r["hit@1"] < 1:
                print(
                    f"    {r['set']}/{r['arm']} {r['query']}: target {r['target']} rank "
                    f"{r['rank']} top {r['top']}"
                )


def latency_summary(session: Session) -> dict[str, dict[str, float]]:
    return {
        name: {
            "searches": float(len(samples)),
            "median_ms": percentile(samples, 50),
            "p95_ms": percentile(samples, 95),
        }
        for name, samples in session.latencies.items()
        if samples
    }


# -- main ------------------------------------------------------------------------------------


def parse_overrides(items: Sequence[str]) -> dict[str, float]:
    known = {f.name: f.type for f in dataclasses.fields(EngineConfig)}
    out: dict[str, float] = {}
    for item in items:
        name, _, value = item.partition("=")
        if name not in known or not value:
            raise SystemExit(f"eval: --set takes KNOB=VALUE with a knob of {sorted(known)}")
        out[name] = int(value) if known[name] in (int, "int") else float(value)
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument(
        "--only", default=",".join(DATASETS), help="comma list of " + "/".join(DATASETS)
    )
    parser.add_argument("--split", choices=SPLITS, default="all")
    parser.add_argument(
        "--limit-locomo", type=int, metavar="N", help="first N questions per conversation"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="write every figure as JSON")
    parser.add_argument("--show-misses", action="store_true", help="list memoree and zh misses")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KNOB=VALUE",
        help="override an engine knob (EngineConfig field) for an experiment; repeatable",
    )
    args = parser.parse_args(argv)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = [x for x in only if x not in DATASETS]
    if unknown or not only:
        parser.error(f"--only takes {', '.join(DATASETS)}; got {args.only!r}")
    args.only = only
    if args.limit_locomo is not None and args.limit_locomo < 1:
        parser.error("--limit-locomo must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    data: Path = args.data
    try:
        require_folder(data)
    except DataError as e:  # until 2026-12-01 exit 2, the status of a mistyped option
        print(f"eval: {e}", file=sys.stderr)
        return exit_status(e)
    session = Session(overrides=parse_overrides(args.set))
    started = time.perf_counter()
    results: dict[str, Any] = {}
    seconds: dict[str, float] = {}
    runners: dict[str, Callable[[], dict[str, Any]]] = {
        "locomo": lambda: eval_locomo(session, data, args.split, args.limit_locomo),
        "memoree": lambda: eval_memoree(session, data, args.split),
        "zh": lambda: eval_zh(session, data, args.split),
    }
    try:
        for name in DATASETS:
            if name in args.only:
                print(f"eval: {name} ...", file=sys.stderr)
                t0 = time.perf_counter()
                results[name] = runners[name]()
                seconds[name] = time.perf_counter() - t0
    except (DataError, EvalError) as e:
        print(f"eval: {e}", file=sys.stderr)
        return exit_status(e) if isinstance(e, DataError) else 1
    wall = time.perf_counter() - started

    print(f"engine config {session.digest}")
    print(
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}; data {data}; "
        f"split {args.split}; {session.stores} throwaway stores"
        + (f"; LoCoMo limited to {args.limit_locomo} questions" if args.limit_locomo else "")
    )
    if "locomo" in results:
        print_locomo(results["locomo"])
    if "memoree" in results:
        print_memoree(results["memoree"], args.show_misses)
    if "zh" in results:
        print_zh(results["zh"], args.show_misses)
    latencies = latency_summary(session)
    print()
    for name, lat in latencies.items():
        print(
            f"{name}: {seconds[name]:.1f} s, {int(lat['searches'])} searches, "
            f"median {lat['median_ms']:.2f} ms, p95 {lat['p95_ms']:.2f} ms"
        )
    print(f"wall time {wall:.1f} s")

    if args.json:
        payload: dict[str, Any] = {
            "engine_config": session.digest,
            "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "split": args.split,
            "limit_locomo": args.limit_locomo,
            **results,
            "timing": {"wall_s": wall, "seconds": seconds, "search": latencies},
        }
        args.json.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
