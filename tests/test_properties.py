"""Property tests (hypothesis) for revisions, idempotency and cursor paging, on real stores."""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import search_index
from core.app import Cairn
from core.errors import IdempotencyMismatch
from core.model import Caller, ListFilter, Scope, Status, Surface, WriteStatus
from core.paths import Paths
from core.requests import UpdateRequest, WriteRequest
from core.settings import Settings
from core.similarity import best_matches, terms_of, weighted_overlap
from tests.conftest import FakeClock, open_policy

PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
AGENT = Caller(Surface.AGENT, agent="prop", verified=True)


@contextmanager
def fresh_cairn(clock: FakeClock | None = None) -> Iterator[Cairn]:
    root = Path(tempfile.mkdtemp(prefix="cp", dir="/tmp"))
    paths = Paths(data=root / "d", config=root / "c", state=root / "s", runtime=root / "r")
    open_policy(paths.config)
    app = Cairn.open(paths, settings=Settings.defaults(), clock=clock or FakeClock())
    try:
        yield app
    finally:
        app.close()
        shutil.rmtree(root, ignore_errors=True)


words = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(lambda s: s.strip())
edits = st.lists(
    st.one_of(
        st.tuples(st.just("content"), words),
        st.tuples(st.just("importance"), st.integers(1, 5)),
        st.tuples(st.just("pin"), st.booleans()),
        st.tuples(st.just("archive"), st.booleans()),
        st.tuples(st.just("tags"), st.lists(st.sampled_from(["x", "y", "z"]), max_size=3)),
    ),
    max_size=12,
)


@PROPERTY_SETTINGS
@given(first=words, steps=edits)
def test_revisions_record_every_change_and_never_rewrite_history(
    first: str, steps: list[tuple[str, object]]
) -> None:
    with fresh_cairn() as cairn:
        mid = cairn.memories.write(
            AGENT, WriteRequest(content=first, kind="fact", scope=Scope.GLOBAL)
        ).id
        assert mid is not None
        expected = [first]  # content at each revision, in order
        snapshots = {1: cairn.memories.get(AGENT, mid).memory}
        for field, value in steps:
            current = cairn.memories.get(AGENT, mid).memory
            if field == "pin":
                after = cairn.memories.set_pinned(AGENT, mid, bool(value))
            elif field == "archive":
                after = cairn.memories.set_archived(AGENT, mid, bool(value))
            else:
                params = {"id": mid, "if_revision": current.revision, field: value}
                res = cairn.memories.update(AGENT, UpdateRequest.from_params(params))
                after = cairn.memories.get(AGENT, mid).memory
                assert res.revision == after.revision
            if after.revision != current.revision:
                assert after.revision == current.revision + 1
                expected.append(after.content)
                snapshots[after.revision] = after
        detail = cairn.memories.get(AGENT, mid, history=True)
        assert [r.revision for r in detail.revisions] == list(range(1, len(expected) + 1))
        assert [r.content for r in detail.revisions] == expected
        for rev in detail.revisions:  # each stored revision equals the state it recorded
            snap = snapshots[rev.revision]
            assert (rev.content, rev.importance, rev.pinned, rev.status, rev.tags) == (
                snap.content,
                snap.importance,
                snap.pinned,
                snap.status,
                snap.tags,
            )


@PROPERTY_SETTINGS
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["k1", "k2", "k3", None]), st.sampled_from(["alpha", "beta", "gamma"])
        ),
        min_size=1,
        max_size=15,
    )
)
def test_idempotency_keys_replay_or_refuse_and_never_duplicate(
    calls: list[tuple[str | None, str]],
) -> None:
    with fresh_cairn() as cairn:
        first_by_key: dict[str, tuple[str, str]] = {}  # key -> (content, id)
        id_by_content: dict[str, str] = {}
        for key, content in calls:
            req = WriteRequest(
                content=content, kind="fact", scope=Scope.GLOBAL, idempotency_key=key
            )
            if key is not None and key in first_by_key and first_by_key[key][0] != content:
                try:
                    cairn.memories.write(AGENT, req)
                except IdempotencyMismatch:
                    continue
                raise AssertionError("a reused key with new content must fail")
            result = cairn.memories.write(AGENT, req)
            assert result.status is WriteStatus.STORED and result.id is not None
            if key is not None and key in first_by_key:
                assert result.replayed and result.id == first_by_key[key][1]
            if content in id_by_content:
                assert result.id == id_by_content[content]
            id_by_content.setdefault(content, result.id)
            if key is not None:
                first_by_key.setdefault(key, (content, result.id))
        stored = cairn.memories.list(Caller.human()).items
        assert sorted(m.content for m in stored) == sorted(id_by_content)


@PROPERTY_SETTINGS
@given(
    initial=st.integers(0, 25),
    page_size=st.integers(1, 6),
    meddling=st.lists(
        st.tuples(st.sampled_from(["add", "archive", "forget"]), st.integers(0, 10_000)),
        max_size=20,
    ),
)
def test_cursor_paging_is_stable_under_concurrent_writes(
    initial: int, page_size: int, meddling: list[tuple[str, int]]
) -> None:
    with fresh_cairn() as cairn:
        start_ids = [
            cairn.memories.write(
                AGENT, WriteRequest(content=f"start {i}", kind="fact", scope=Scope.GLOBAL)
            ).id
            for i in range(initial)
        ]
        flt = ListFilter(statuses=frozenset({Status.ACTIVE, Status.ARCHIVED}))
        removed: set[str] = set()
        seen: list[str] = []
        cursor = None
        moves = iter(meddling)
        added = 0
        while True:
            page = cairn.memories.list(AGENT, flt, limit=page_size, cursor=cursor)
            seen.extend(m.id for m in page.items)
            move = next(moves, None)
            if move is not None:  # someone else writes between two pages
                action, pick = move
                alive = [m for m in start_ids if m not in removed]
                if action == "add":
                    added += 1
                    cairn.memories.write(
                        AGENT,
                        WriteRequest(content=f"late {added}", kind="fact", scope=Scope.GLOBAL),
                    )
                elif alive and action == "archive":
                    cairn.memories.set_archived(AGENT, str(alive[pick % len(alive)]), True)
                elif alive and action == "forget":
                    victim = alive[pick % len(alive)]
                    cairn.memories.forget(Caller.human(), str(victim))
                    removed.add(str(victim))
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        assert len(seen) == len(set(seen)), "an item appeared twice"
        survivors = {m for m in start_ids if m not in removed}
        assert survivors <= set(seen), "an item that existed throughout was skipped"
        assert not (set(seen) - set(start_ids)), (
            "a memory created during the walk showed up inside it"
        )


_WORDS = ("ledger", "tenant", "gateway", "billing", "cache", "deploy", "staging", "port", "retry")


@settings(max_examples=200, deadline=None)
@given(
    mine=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6),
    others=st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6), max_size=6),
    weights=st.lists(st.floats(min_value=0.0, max_value=9.0), min_size=9, max_size=9),
    threshold=st.floats(min_value=0.0, max_value=1.0),
)
def test_near_duplicate_scores_are_the_weighted_overlap(
    mine: list[str], others: list[list[str]], weights: list[float], threshold: float
) -> None:
    """`best_matches` weighs a text's terms once for all candidates; it must score exactly what
    `weighted_overlap` scores pair by pair (the threshold was measured with the latter)."""

    def idf(term: str) -> float:  # any weight per (stemmed) term, fixed for the example
        return weights[sum(map(ord, term)) % len(weights)]

    text = " ".join(mine)
    candidates = [(f"m{i}", " ".join(words)) for i, words in enumerate(others)]
    got = dict(best_matches(text, candidates, idf, threshold=0.0))
    for oid, other in candidates:
        expected = weighted_overlap(terms_of(text), terms_of(other), idf)
        assert abs(got[oid] - expected) < 1e-9
    kept = [oid for oid, _ in best_matches(text, candidates, idf, threshold=threshold)]
    assert kept == [
        oid for oid, s in sorted(got.items(), key=lambda x: (-x[1], x[0])) if s >= threshold
    ]


# -- term document counts ----------------------------------------------------------------------

# Words that stress the index: English inflections, Chinese, identifiers, paths, versions,
# addresses, full-width forms, repeated and shared words.
index_words = st.sampled_from(
    [
        "deploy",
        "deploys",
        "deployed",
        "service",
        "the",
        "a",
        "数据库",
        "迁移",
        "字段",
        "snake_case",
        "CamelCase",
        "src/app/main.py",
        "v2.3.1",
        "127.0.0.1:3080",
        "ＡＢＣ",
        "port",
        "8443",
        "x",
        "émigré",
        "c++",
        "AWS_PROFILE=prod",
        "a‿b",
        "x·y",
        "हिन्दी",
    ]
)
index_texts = st.lists(index_words, min_size=1, max_size=8).map(" ".join)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("write"), index_texts, st.lists(index_words, max_size=2)),
        st.tuples(st.just("bulk"), st.lists(index_texts, min_size=1, max_size=4), st.just([])),
        st.tuples(st.just("edit"), index_texts, st.lists(index_words, max_size=2)),
        st.tuples(st.just("forget"), st.just(""), st.just([])),
        st.tuples(st.just("supersede"), index_texts, st.just([])),
        st.tuples(st.just("archive"), st.just(""), st.just([])),
        st.tuples(st.just("pin"), st.just(""), st.just([])),
        st.tuples(st.just("expire"), index_texts, st.just([])),
    ),
    min_size=1,
    max_size=12,
)


def counted(cairn: Cairn) -> tuple[dict[str, int], dict[str, int]]:
    """`term_docs`, and the number of index rows holding each term - the terms as search reads
    them, our tokenizer's, space-separated in each row (for a few characters, such as `‿` and
    `·`, FTS5's own split differs)."""
    conn = cairn.store.read_db.conn()
    ours = dict(conn.execute("SELECT term, docs FROM term_docs"))
    rows: Counter[str] = Counter()
    for texts in conn.execute("SELECT content, summary, tags, keywords FROM memory_fts"):
        rows.update({term for text in texts if text for term in text.split()})
    return ours, dict(rows)


@PROPERTY_SETTINGS
@given(ops=operations)
def test_term_document_counts_follow_every_change_of_the_index(
    ops: list[tuple[str, object, list[str]]],
) -> None:
    """Search and the near-duplicate check read a term's document count from `term_docs`; after
    any mix of writes, edits, supersedes, archives, pins, forgets and purges of expired memories it
    equals FTS5's own count, and a reindex gives the same table."""
    human = Caller.human()
    clock = FakeClock()
    with fresh_cairn(clock) as cairn:
        ids: list[str] = []
        for op, text, tags in ops:
            if op == "write":
                r = cairn.memories.write(
                    human,
                    WriteRequest(
                        content=str(text),
                        kind="fact",
                        scope=Scope.USER,
                        tags=tuple(tags),
                        summary=tags[0] if tags else None,
                    ),
                )
                ids += [r.id] if r.id else []
            elif op == "bulk":
                assert isinstance(text, list)
                out = cairn.memories.write_many(
                    human, [WriteRequest(content=t, kind="fact", scope=Scope.GLOBAL) for t in text]
                )
                ids += [r.id for r in out if not isinstance(r, Exception) and r.id]
            elif op == "expire":  # written to expire, then purged after the retention window
                cairn.memories.write(
                    human,
                    WriteRequest(
                        content=f"{text} soon", kind="fact", scope=Scope.USER, ttl_seconds=1
                    ),
                )
                clock.advance(60 * 86_400)
                cairn.memories.purge_expired()
            elif not ids:
                continue
            elif op == "edit":
                current = cairn.memories.get(human, ids[-1]).memory
                if current.status in (Status.ACTIVE, Status.ARCHIVED):
                    cairn.memories.update(
                        human,
                        UpdateRequest(
                            id=current.id,
                            if_revision=current.revision,
                            content=str(text),
                            tags=tuple(tags),
                        ),
                    )
            elif op == "forget":
                cairn.memories.forget(human, ids.pop(0))
            elif op == "supersede":
                old = cairn.memories.get(human, ids[0]).memory
                if old.status in (Status.ACTIVE, Status.ARCHIVED):
                    cairn.memories.supersede(
                        human,
                        old.id,
                        replacement=WriteRequest(
                            content=f"{text} now", kind="fact", scope=Scope.USER
                        ),
                    )
            elif op == "archive":
                current = cairn.memories.get(human, ids[-1]).memory
                if current.status is Status.ACTIVE:
                    cairn.memories.set_archived(human, current.id, True)
            elif op == "pin":
                current = cairn.memories.get(human, ids[-1]).memory
                if current.status in (Status.ACTIVE, Status.ARCHIVED):
                    cairn.memories.set_pinned(human, current.id, not current.pinned)
        ours, fts = counted(cairn)
        assert ours == fts
        cairn.store.writer.run(lambda tx: search_index.rebuild(tx.conn))
        assert counted(cairn)[0] == ours
