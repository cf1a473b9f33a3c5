"""Build a two-year-old store through the service API: 100,000 memories (kinds, scopes, six
workspaces, four agents, short and long texts in English and Chinese), 10,000 tombstones,
3,000 proposals waiting, a few hundred identity versions and an audit ledger of about 500,000
events (agents' feedback and people's edits make up what the writes do not).

    python scripts/bigstore.py HOME [--memories 100000] [--forgotten 10000] [--proposals 3000]
        [--identity 300] [--audit 500000] [--data ../shared/data] [--resume]

Long texts (runs of LoCoMo turns, up to about 4.5 KB) and the Chinese paragraphs come from
`--data` (from a git worktree, pass the path: the default is relative to the checkout); without
it, generated sentences only, and the script says so. `--resume` goes on after the memories
where a build stopped. About 6 minutes on 2 quiet-ish cores.

HOME becomes a CAIRN_HOME (run `CAIRN_HOME=HOME cairn ...` against it). Its settings raise
`review.max_items` (so 3,000 proposals wait) and `audit.max_events` (so the whole ledger stays in
the table); the capture policy lets everything land while the memories are written, then goes
back to the default so agents' ideas and changes to a person's memories wait for review.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import unique_memories
from evaldata import DEFAULT_DATA, DataError, load_locomo, load_zh

from core.app import Cairn
from core.model import Caller, Scope, Surface, WriteResult
from core.paths import resolve_paths
from core.policy import POLICY_FILE, Policy, all_auto
from core.policy_file import write_policy
from core.requests import UpdateRequest, WriteRequest
from core.settings import load_settings
from core.validation import Limits

AGENTS = ("claude-code", "aider", "codex", "cursor")
PROJECTS = ("billing", "gateway", "ingest", "notifier", "mobile-app", "infra")
KINDS = ("fact", "fact", "fact", "procedure", "preference", "convention", "pitfall", "insight")
BATCH = 5000


def real_texts(rng: random.Random, data: Path) -> list[str]:
    """LoCoMo turns (short), runs of them (long) and the Chinese paragraphs, where the data is."""
    out: list[str] = []
    try:
        turns = [t.content for c in load_locomo(data) for t in c.turns]
        out += turns
        for start in range(0, len(turns) - 20, 7):  # 1-4 KB texts: a stretch of conversation
            out.append("\n".join(turns[start : start + rng.randint(8, 20)]))
    except (DataError, OSError) as e:
        print(f"no LoCoMo turns ({e}): generated texts only", file=sys.stderr)
    try:
        zh = load_zh(data)
        out += [m.text for m in (*zh.memories, *zh.distractors, *zh.hard_memories)]
    except (DataError, OSError) as e:
        print(f"no Chinese paragraphs ({e})", file=sys.stderr)
    return out


def requests(rng: random.Random, n: int, real: Sequence[str]) -> list[WriteRequest]:
    generated = unique_memories(rng, n, chinese_share=0.25)
    reqs = []
    seen: set[str] = set()
    for i, m in enumerate(generated):
        content = m.content
        if real and rng.random() < 0.15:
            content = f"{rng.choice(real)} (#{i})"
        if content in seen:
            content += f" [{i}]"
        seen.add(content)
        reqs.append(
            WriteRequest(
                content=content,
                kind=m.kind if rng.random() < 0.5 else rng.choice(KINDS),
                scope=Scope.PROJECT,  # the scope is decided per caller below
                tags=m.tags,
                summary=m.summary,
                importance=rng.choice((1, 2, 3, 3, 3, 4, 5)),
                pinned=rng.random() < 0.01,
            )
        )
    return reqs


def build(home: Path, args: argparse.Namespace) -> None:
    rng = random.Random(20_261_201)
    paths = resolve_paths({"CAIRN_HOME": str(home)})
    paths.config.mkdir(parents=True, exist_ok=True)
    paths.settings_file.write_text(
        f"[review]\nmax_items = {max(200, args.proposals + 500)}\n\n"
        f"[audit]\nmax_events = {max(200_000, args.audit * 2)}\n",
        encoding="utf-8",
    )
    settings = load_settings(paths.settings_file)
    write_policy(paths.config / POLICY_FILE, all_auto(Limits(settings).kinds))
    person = Caller.human()
    t_all = time.perf_counter()
    cairn = Cairn.open(paths, settings=settings)
    try:
        known = {a.name for a in cairn.agents.list()}
        for name in AGENTS:
            if name not in known:
                cairn.agents.add(person, name)
        workspaces = []
        for name in PROJECTS:
            folder = home / "projects" / name
            folder.mkdir(parents=True, exist_ok=True)
            workspaces.append(cairn.workspaces.resolve(str(folder)).id)

        def caller_for(i: int) -> tuple[Caller, Scope]:
            roll = rng.random()
            if roll < 0.25:
                return person, rng.choice((Scope.USER, Scope.GLOBAL))
            ws = rng.choice(workspaces)
            if roll < 0.35:
                return Caller(Surface.HUMAN, workspace_id=ws), Scope.PROJECT
            agent = Caller(
                Surface.AGENT,
                agent=rng.choice(AGENTS),
                verified=True,
                workspace_id=ws,
                session_id=f"s{i // 500}",
            )
            scope = Scope.PROJECT if roll < 0.9 else rng.choice((Scope.USER, Scope.SESSION))
            return agent, scope

        t0 = time.perf_counter()
        total = args.memories + args.forgotten
        reqs = requests(rng, total, real_texts(rng, args.data))
        ids: list[str] = []
        resumed = bool(cairn.store.read_db.conn().execute("SELECT 1 FROM memory").fetchone())
        for start in range(0, 0 if resumed else total, BATCH):
            by_caller: dict[tuple[Caller, Scope], list[WriteRequest]] = {}
            who, where = caller_for(start)
            for i, req in enumerate(reqs[start : start + BATCH], start):
                if i % 250 == 0:  # an agent's session writes a run of memories
                    who, where = caller_for(i)
                by_caller.setdefault((who, where), []).append(replace(req, scope=where))
            for (who, _), batch in by_caller.items():
                out = cairn.memories.write_many(who, batch)
                bad = [o for o in out if isinstance(o, Exception)]
                if bad:
                    raise SystemExit(f"{len(bad)} writes failed, first: {bad[0]!r}")
                ids += [o.id for o in out if isinstance(o, WriteResult) and o.id]
        print(f"{len(ids):,} memories written in {time.perf_counter() - t0:.1f} s", flush=True)

        t0 = time.perf_counter()
        gone = [] if resumed else rng.sample(ids, args.forgotten)
        for start in range(0, len(gone), 500):
            chunk = gone[start : start + 500]
            cairn.store.writer.run(
                lambda tx, chunk=chunk: [  # type: ignore[misc]
                    cairn.memories.forget_in(tx, person, mid, "no longer true") for mid in chunk
                ]
            )
        kept = [
            r[0]
            for r in cairn.store.read_db.conn().execute(
                "SELECT id FROM memory WHERE status = 'active'"
            )
        ]
        print(f"{len(gone):,} forgotten in {time.perf_counter() - t0:.1f} s", flush=True)

        t0 = time.perf_counter()
        versions = cairn.store.read_db.conn().execute("SELECT count(*) FROM identity_version")
        for v in range(versions.fetchone()[0], args.identity):
            doc = "user" if v % 3 else "soul"
            current = cairn.identity.get(person, doc)
            cairn.identity.edit(
                person,
                doc,
                # the last twenty notes: the document stays under identity.max_bytes
                "\n".join(
                    [
                        *current.content.splitlines()[-19:],
                        f"- note {v}: {rng.choice(reqs).content[:120]}",
                    ]
                ),
                if_version=current.version,
                reason=f"edit {v}",
            )
        print(f"{args.identity} identity versions in {time.perf_counter() - t0:.1f} s", flush=True)

        # The rest of the ledger: agents' feedback on what they recalled and people's edits.
        t0 = time.perf_counter()
        events = int(cairn.store.read_db.conn().execute("SELECT count(*) FROM audit").fetchone()[0])
        want = args.audit - events - args.proposals
        revisions = dict.fromkeys(kept, 1)
        homes = {
            mid: (ws, sid)
            for mid, ws, sid in cairn.store.read_db.conn().execute(
                "SELECT id, workspace_id, session_id FROM memory"
            )
        }
        done = 0
        while done < want:
            n = min(1000, want - done)
            chunk = [rng.choice(kept) for _ in range(n)]

            for mid in chunk:
                try:
                    if rng.random() < 0.3:
                        r = cairn.memories.update(
                            person,
                            UpdateRequest(
                                id=mid,
                                if_revision=revisions[mid],
                                importance=rng.randint(1, 5),
                                reason="reviewed",
                            ),
                        )
                        if r.revision:
                            revisions[mid] = r.revision
                    else:
                        ws, sid = homes[mid]
                        cairn.memories.feedback(
                            Caller(
                                Surface.AGENT,
                                agent=rng.choice(AGENTS),
                                verified=True,
                                workspace_id=ws,
                                session_id=sid,
                            ),
                            mid,
                            "useful",
                        )
                except Exception as e:  # noqa: BLE001 - a project memory out of reach, say
                    print(f"  skipped {mid}: {type(e).__name__}: {e}", file=sys.stderr)
            done += n
            if done % 20_000 < 1000:
                print(f"  {done:,} of {want:,} events ({time.perf_counter() - t0:.0f} s)")
        print(f"{want:,} audit events in {time.perf_counter() - t0:.1f} s", flush=True)
    finally:
        cairn.close()

    # Waiting proposals, under the default policy.
    write_policy(paths.config / POLICY_FILE, Policy())
    cairn = Cairn.open(paths, settings=settings)
    try:
        t0 = time.perf_counter()
        conn = cairn.store.read_db.conn()
        mine = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM memory WHERE status = 'active' AND tier = 'human' "
                "AND scope IN ('user', 'global') LIMIT 2000"
            )
        ]
        made = 0
        while cairn.review.count() < args.proposals:
            agent = Caller(
                Surface.AGENT,
                agent=rng.choice(AGENTS),
                verified=True,
                workspace_id=None,
                session_id="late",
            )
            roll = rng.random()
            if roll < 0.6:
                text = f"idea {made}: {rng.choice(reqs).content[:300]}"
                cairn.memories.write(
                    agent, WriteRequest(content=text, kind="idea", scope=Scope.USER)
                )
            elif roll < 0.85 and mine:
                mid = rng.choice(mine)
                got = cairn.memories.get(person, mid).memory
                cairn.memories.update(
                    agent,
                    UpdateRequest(
                        id=mid,
                        if_revision=got.revision,
                        content=got.content + f" (agent correction {made})",
                        reason="saw it differently",
                    ),
                )
            else:
                cairn.memories.feedback(agent, rng.choice(mine), rng.choice(("wrong", "stale")))
            made += 1
        print(
            f"{cairn.review.count():,} proposals waiting ({made:,} made) in "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )
    finally:
        cairn.close()
    print(f"built in {time.perf_counter() - t_all:.0f} s: CAIRN_HOME={home}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--forgotten", type=int, default=10_000)
    parser.add_argument("--proposals", type=int, default=3000)
    parser.add_argument("--identity", type=int, default=300)
    parser.add_argument("--audit", type=int, default=500_000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="../shared/data")
    parser.add_argument("--resume", action="store_true", help="go on after the memories")
    args = parser.parse_args()
    if args.home.exists() and any(args.home.iterdir()) and not args.resume:
        parser.error(f"{args.home} is not empty (--resume goes on where a build stopped)")
    build(args.home, args)
    print(json.dumps(vars(args), default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
