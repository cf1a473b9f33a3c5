"""Loaders for the public retrieval-evaluation sets in ../shared/data (LoCoMo, memoree-v2, zh).

Only reading and shaping lives here: each loader returns plain typed values (texts, ids, labels)
and knows nothing about Cairn. The data is read in place and never copied into the repository.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")


# A script's exit status when its data is not there: no such input, as `cairn`'s not_found.
EXIT_NO_DATA = 66

# What a script says to do about missing data.
_GIVE_DATA = "give --data DIR, the folder holding locomo/, memoree-v2/ and knowledge-seam-zh/"


class DataError(Exception):
    """A data file is missing or does not have the shape the loader expects."""


class DataMissing(DataError):
    """The data folder, or a file a loader reads in it, is not there (until 2026-12-01 a script
    run without ../shared/data beside the checkout ended in a traceback)."""


def exit_status(error: DataError) -> int:
    """A script's exit status for `error`: 66 when the data is not there, else 1."""
    return EXIT_NO_DATA if isinstance(error, DataMissing) else 1


def require_folder(data: Path) -> None:
    """Raises DataMissing, naming `data` and --data, when the data folder does not exist."""
    if not data.is_dir():
        raise DataMissing(f"the data folder {data} does not exist; {_GIVE_DATA}")


def _read_json(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise DataMissing(f"{path} is missing; {_GIVE_DATA}") from None
    except json.JSONDecodeError as e:
        raise DataError(f"{path} is not valid JSON: {e}") from None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, blank lines skipped.

    Raises:
        DataMissing: there is no such file.
        DataError: a line is not a JSON object.
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DataMissing(f"{path} is missing; {_GIVE_DATA}") from None
    out: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}:{number} is not valid JSON: {e}") from None
        if not isinstance(value, dict):
            raise DataError(f"{path}:{number} is not a JSON object")
        out.append(value)
    return out


def _str(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str):
        raise DataError(f"{where}: field {key!r} should be a string, got {type(value).__name__}")
    return value


def _strs(obj: dict[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list):
        raise DataError(f"field {key!r} should be a list")
    return tuple(str(v) for v in value)


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DataError(f"{where} should be a list of objects")
    return value


# -- LoCoMo ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: int
    content: str  # "{speaker} ({session date}): {text}" with " [image: {caption}]" when present


@dataclass(frozen=True)
class LocomoQuestion:
    index: int  # position in the conversation's qa list
    question: str
    category: int
    gold: tuple[str, ...]  # valid evidence dia_ids (empty for adversarial questions)


@dataclass(frozen=True)
class Conversation:
    index: int
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[LocomoQuestion, ...]
    dropped: tuple[int, ...]  # qa indices of categories 1-4 left without any valid gold turn


def _valid_evidence(raw: list[Any], known: set[str]) -> tuple[str, ...]:
    """Evidence ids that name a real turn. Entries holding several ids ("D8:6; D9:17") are split;
    malformed or missing ids ("D", "D:11:26", "D30:05") are dropped."""
    out: list[str] = []
    for entry in raw:
        for piece in _EVIDENCE_SPLIT.split(str(entry)):
            if piece in known and piece not in out:
                out.append(piece)
    return tuple(out)


def load_locomo(data: Path) -> list[Conversation]:
    raw = _objects(_read_json(data / "locomo" / "locomo10.json"), "locomo10.json")
    conversations: list[Conversation] = []
    for ci, sample in enumerate(raw):
        conv = sample.get("conversation")
        if not isinstance(conv, dict):
            raise DataError(f"locomo conversation {ci} has no 'conversation' object")
        sessions = sorted(
            (int(m.group(1)), key)
            for key in conv
            if (m := _SESSION_KEY.fullmatch(key)) and isinstance(conv[key], list) and conv[key]
        )
        turns: list[Turn] = []
        for number, key in sessions:
            date = str(conv.get(f"{key}_date_time", "")).strip()
            for turn in _objects(conv[key], f"locomo {ci} {key}"):
                where = f"locomo {ci} {key}"
                text = f"{_str(turn, 'speaker', where)} ({date}): {_str(turn, 'text', where)}"
                caption = turn.get("blip_caption")
                if isinstance(caption, str) and caption.strip():
                    text += f" [image: {caption.strip()}]"
                turns.append(Turn(_str(turn, "dia_id", where), number, text))
        known = {t.dia_id for t in turns}
        questions: list[LocomoQuestion] = []
        dropped: list[int] = []
        for qi, qa in enumerate(_objects(sample.get("qa"), f"locomo {ci} qa")):
            category = int(qa.get("category", 0))
            evidence = qa.get("evidence") or []
            gold = _valid_evidence(evidence if isinstance(evidence, list) else [], known)
            if category in (1, 2, 3, 4) and not gold:
                dropped.append(qi)
                continue
            if category not in (1, 2, 3, 4, 5):
                continue
            question = _str(qa, "question", f"locomo {ci} qa {qi}")
            questions.append(LocomoQuestion(qi, question, category, gold if category < 5 else ()))
        conversations.append(
            Conversation(
                ci, str(sample.get("sample_id", ci)), tuple(turns), tuple(questions), tuple(dropped)
            )
        )
    return conversations


# -- memoree-v2 ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedMemory:
    label: str
    project: str
    kind: str  # the corpus' own kind (decision, constraint, ...), for information only
    content: str


@dataclass(frozen=True)
class SeedRelation:
    label: str
    relation: str  # "contradicts" or "supersedes"
    source: str
    target: str


@dataclass(frozen=True)
class MemoreeCase:
    case_id: str
    slice: str
    project: str
    query: str
    broaden: bool  # horizon "workspace": an explicitly justified look beyond the project
    expected_presence: str  # claims | artifacts_only | none
    answerable: bool
    relevant: tuple[str, ...]  # relevant_claims + relevant_artifacts
    forbidden: tuple[str, ...]
    conflicts: tuple[tuple[str, str], ...]


def _artifact_text(item: dict[str, Any], where: str) -> str:
    body = item.get("content")
    if not isinstance(body, dict):
        raise DataError(f"{where}: artifact without a content object")
    data = _str(body, "data", where)
    repeat = item.get("content_repeat")
    if isinstance(repeat, dict):
        data += str(repeat.get("unit", "")) * int(repeat.get("count", 0))
        data += str(repeat.get("suffix", ""))
    return f"{_str(item, 'title', where)}\n{data}"


def load_memoree(data: Path) -> tuple[list[SeedMemory], list[SeedRelation], list[MemoreeCase]]:
    base = data / "memoree-v2"
    memories: list[SeedMemory] = []
    relations: list[SeedRelation] = []
    for item in read_jsonl(base / "seed.jsonl"):
        label = _str(item, "label", "memoree seed")
        where = f"memoree seed {label}"
        context = item.get("context") or {}
        project = str(context.get("project_id", ""))
        entity = item.get("entity")
        if entity == "artifact":
            text = _artifact_text(item, where)
            memories.append(SeedMemory(label, project, str(item.get("kind", "")), text))
        elif entity == "claim":
            kind = str(item.get("claim_type", ""))
            memories.append(SeedMemory(label, project, kind, _str(item, "statement", where)))
        elif entity == "relation":
            relations.append(
                SeedRelation(
                    label,
                    _str(item, "relation", where),
                    _str(item, "source_label", where),
                    _str(item, "target_label", where),
                )
            )
        else:
            raise DataError(f"{where}: unknown entity {entity!r}")
    cases: list[MemoreeCase] = []
    for item in read_jsonl(base / "cases.jsonl"):
        case_id = _str(item, "case_id", "memoree case")
        context = item.get("context") or {}
        conflicts = tuple(
            (str(pair[0]), str(pair[1]))
            for pair in item.get("expected_conflicts") or []
            if isinstance(pair, list) and len(pair) == 2
        )
        cases.append(
            MemoreeCase(
                case_id=case_id,
                slice=_str(item, "slice", case_id),
                project=str(context.get("project_id", "")),
                query=_str(item, "query", case_id),
                broaden=item.get("horizon") == "workspace",
                expected_presence=_str(item, "expected_presence", case_id),
                answerable=bool(item.get("answerable")),
                relevant=_strs(item, "relevant_claims") + _strs(item, "relevant_artifacts"),
                forbidden=_strs(item, "forbidden"),
                conflicts=conflicts,
            )
        )
    return memories, relations, cases


# -- knowledge-seam-zh -----------------------------------------------------------------------


@dataclass(frozen=True)
class ZhMemory:
    id: str
    text: str
    distractor: bool = False


@dataclass(frozen=True)
class ZhQuery:
    id: str
    text: str
    target: str | None  # None: the query should find nothing


@dataclass(frozen=True)
class ZhData:
    memories: tuple[ZhMemory, ...]  # all-memories.json: m1-m12 and n1-n10
    distractors: tuple[ZhMemory, ...]  # distractors.json, ids d0..d499
    human_queries: tuple[ZhQuery, ...]
    human_variants: dict[str, tuple[str, ...]]
    hard_memories: tuple[ZhMemory, ...]  # hard-set.json: m1-m12
    hard_queries: tuple[ZhQuery, ...]
    hard_variants: dict[str, tuple[str, ...]]
    enrichment: dict[str, str]  # memory id -> write-time keywords text


def _zh_memories(value: Any, where: str) -> tuple[ZhMemory, ...]:
    return tuple(
        ZhMemory(_str(m, "id", where), _str(m, "text", where)) for m in _objects(value, where)
    )


def _zh_queries(value: Any, where: str) -> tuple[ZhQuery, ...]:
    out: list[ZhQuery] = []
    for q in _objects(value, where):
        target = q.get("target")
        out.append(
            ZhQuery(
                _str(q, "id", where),
                _str(q, "text", where),
                None if target in (None, "none") else str(target),
            )
        )
    return tuple(out)


def _variants(value: Any, where: str) -> dict[str, tuple[str, ...]]:
    return {_str(q, "id", where): _strs(q, "variants") for q in _objects(value, where)}


def load_zh(data: Path) -> ZhData:
    base = data / "knowledge-seam-zh"
    raw_distractors = _read_json(base / "distractors.json")
    if not isinstance(raw_distractors, list):
        raise DataError("distractors.json should be a list of strings")
    hard = _read_json(base / "hard-set.json")
    if not isinstance(hard, dict):
        raise DataError("hard-set.json should be an object with memories and queries")
    enrichment: dict[str, str] = {}
    for item in _objects(_read_json(base / "enriched.json"), "enriched.json"):
        parts = _strs(item, "keywords") + _strs(item, "synonyms") + _strs(item, "questions")
        enrichment[_str(item, "id", "enriched.json")] = " ".join(parts)
    return ZhData(
        memories=_zh_memories(_read_json(base / "all-memories.json"), "all-memories.json"),
        distractors=tuple(
            ZhMemory(f"d{i}", str(text), distractor=True) for i, text in enumerate(raw_distractors)
        ),
        human_queries=_zh_queries(_read_json(base / "human-queries.json"), "human-queries.json"),
        human_variants=_variants(_read_json(base / "human-expanded.json"), "human-expanded.json"),
        hard_memories=_zh_memories(hard.get("memories"), "hard-set.json memories"),
        hard_queries=_zh_queries(hard.get("queries"), "hard-set.json queries"),
        hard_variants=_variants(_read_json(base / "expanded.json"), "expanded.json"),
        enrichment=enrichment,
    )
