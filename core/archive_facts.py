"""What this store holds about an archive's memories, as an import asks it before deciding: the
queries by id or by text (each binds a JSON list, `id_list`), where a live memory keeps its text,
and the facts about one chunk of memories that each of its decisions reads."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from core import tombstones
from core.archive_records import ArchivedMemory
from core.clock import Clock
from core.dedupe import text_key
from core.model import Memory, Revision, Status
from core.records import SELECT_REVISION, revision_from_row
from core.validation import content_hash

STATUS_OF = (
    "SELECT m.id, m.status, m.dedupe_key FROM memory m JOIN json_each(?) j ON j.value = m.id"
)
LIVE_IDS = (
    "SELECT m.id FROM memory m JOIN json_each(?) j ON j.value = m.id WHERE m.status != 'forgotten'"
)
TOMBSTONED_IDS = "SELECT t.memory_id FROM tombstone t JOIN json_each(?) j ON j.value = t.memory_id"
_EXPIRED_IDS = f"{TOMBSTONED_IDS} WHERE NOT ({tombstones.NOT_EXPIRED})"
# The live memories holding a text (as `dedupe.live_with_text` finds them), oldest first.
_SAME_CONTENT = (
    "SELECT m.id, m.content_hash, m.scope, coalesce(m.workspace_id, ''), "
    "coalesce(m.session_id, '') FROM memory m JOIN json_each(?) j ON j.value = m.content_hash "
    "WHERE m.status IN ('active', 'archived') AND (m.expires_at IS NULL OR m.expires_at > ?) "
    "ORDER BY m.seq"
)
_REVISIONS_OF = (
    SELECT_REVISION
    + " JOIN json_each(?) j ON j.value = r.memory_id ORDER BY r.memory_id, r.revision"
)


def id_list(values: Sequence[str] | set[str]) -> str:
    """The ids as one JSON list, each once: what a query's `json_each(?)` takes."""
    return json.dumps(sorted(set(values)))


TextKey = tuple[str, str, str, str]  # where a store keeps one text once: `text_key`


def live_text(m: Memory, now: int) -> TextKey | None:
    """Where `m` keeps its text once live (active or archived, unexpired); None when it is not
    live, so holds no text against another memory."""
    if m.status not in (Status.ACTIVE, Status.ARCHIVED):
        return None
    if m.expires_at is not None and m.expires_at <= now:
        return None
    return text_key(m)


@dataclass(frozen=True)
class Facts:
    """What the store holds about one chunk's memories."""

    status: dict[str, str]
    buried: set[str]  # ids with a tombstone here
    buried_texts: set[str]  # content hashes with a tombstone here
    # of those, the ones only an expiry left: purged because their time was up, nobody forgot
    # them (until 2026-11-30 the report said "forgotten here" of them too)
    expired: set[str]
    expired_texts: set[str]
    history: dict[str, list[Revision]]
    keys: dict[str, str | None]  # memory id -> its dedupe key here
    same: dict[TextKey, list[str]]  # live memories here holding a text this chunk adds
    hashes: dict[str, list[str]]  # memory id -> the content hash of each archived revision


def gone(hashes: Sequence[str], facts: Facts) -> str:
    """What became of these buried texts here: forgotten, unless only expiries buried them."""
    if all(h in facts.expired_texts for h in hashes):
        return "expired and was purged"
    return "was forgotten"


def chunk_facts(conn: sqlite3.Connection, chunk: Sequence[ArchivedMemory], clock: Clock) -> Facts:
    """What the store holds about one chunk of the archive's memories."""
    ids = [am.memory.id for am in chunk]
    status: dict[str, str] = {}
    keys: dict[str, str | None] = {}
    for mid, state, key in conn.execute(STATUS_OF, (id_list(ids),)):
        status[mid], keys[mid] = state, key
    hashes = {am.memory.id: [content_hash(r.content) for r in am.revisions] for am in chunk}
    texts = {h for each in hashes.values() for h in each}
    history: dict[str, list[Revision]] = {}
    held = [i for i in ids if status.get(i, "forgotten") != "forgotten"]
    for row in conn.execute(_REVISIONS_OF, (id_list(held),)):
        history.setdefault(row[0], []).append(revision_from_row(row))
    # An exact duplicate is one memory in Cairn: text this chunk would add that the store
    # already holds keeps the store's copy (`Placement._decide_new` leaves out the archive's
    # memories this import may change).
    now = clock.now_ms()
    new = {
        hashes[am.memory.id][-1]
        for am in chunk
        if am.memory.id not in status and live_text(am.memory, now) is not None
    }
    same: dict[TextKey, list[str]] = {}
    for mid, h, scope, ws, sid in conn.execute(_SAME_CONTENT, (id_list(new), now)):
        same.setdefault((h, scope, ws, sid), []).append(mid)
    buried_texts = tombstones.buried_texts(conn, texts)
    return Facts(
        status=status,
        buried={str(r[0]) for r in conn.execute(TOMBSTONED_IDS, (id_list(ids),))},
        buried_texts=buried_texts,
        expired={str(r[0]) for r in conn.execute(_EXPIRED_IDS, (id_list(ids),))},
        expired_texts=tombstones.only_expired(conn, buried_texts),
        history=history,
        keys=keys,
        same=same,
        hashes=hashes,
    )
