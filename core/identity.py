"""Identity documents: the agent's `soul` (its character, per agent with a shared default) and
the `user` profile, as immutable versions. Agents read and propose; a person edits, adopts a
proposal, or reverts in two steps (preview with a short-lived token, then apply).

Every version passes the scanner (a secret is refused; flagged text is redacted when an agent
reads it) and the size budget (`identity.max_bytes`). History is never rewritten: a revert is a
new version whose content is an older one's.
"""

from __future__ import annotations

import difflib
import hashlib
import hmac
import json
import re
import secrets
import sqlite3
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from core import audit
from core.clock import Clock
from core.errors import Conflict, Forbidden, InvalidInput, NotFound, TooLarge
from core.governance import Gate, Outcome, Redactor
from core.model import Caller, Surface, WriteResult, WriteStatus
from core.proposals import Proposals, waiting_because
from core.scanner import secret_rule
from core.settings import Settings
from core.store import Store
from core.suggestions import Flag, Op, Reason, Suggestion, new_suggestion_id
from core.validation import content_hash, normalize_breaks, refuse_control, utf8_size
from core.writer import WriteTx

TEMPLATES = Path(__file__).resolve().parent.parent / "resources" / "identity"
DEFAULT_SOUL = "soul:default"
USER = "user"
_AGENT_DOC = re.compile(r"^soul:[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
REVERT_TOKEN_SECONDS = 300
_AUTHOR_KINDS = {
    Surface.HUMAN: "human",
    Surface.NOTES: "human",
    Surface.AGENT: "agent",
    Surface.SYSTEM: "system",
    Surface.IMPORT: "import",
}


def check_document(content: object, max_bytes: int) -> str:
    """A document version's text: non-empty, within `max_bytes` (`identity.max_bytes`), its line
    breaks as line feeds, without control characters (until 2026-11-30 an agent's proposal
    could carry escape sequences, or a bare carriage return, that hid words from the person
    reviewing it at a terminal). The service checks every version with it, and `cairn identity
    edit` before it asks the person to confirm.

    Raises:
        InvalidInput: empty, not text, or holding a control character.
        TooLarge: over `max_bytes`, naming the size and the limit.
    """
    if not isinstance(content, str) or not content.strip():
        raise InvalidInput("content must be non-empty text", data={"field": "content"})
    content = normalize_breaks(content)
    size = utf8_size("content", content)
    if size > max_bytes:
        raise TooLarge(
            f"the document is {size} bytes; the limit is {max_bytes} "
            "(identity.max_bytes): it is injected into prompts, so keep it short",
            data={"field": "content", "limit": max_bytes},
        )
    refuse_control("content", content)
    return content


@dataclass(frozen=True)
class IdentityVersion:
    doc: str
    version: int
    content: str
    author_kind: str  # human, agent, system, import
    author: str
    reason: str | None
    parent: int | None
    created_at: int
    content_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc": self.doc,
            "version": self.version,
            "content": self.content,
            "author_kind": self.author_kind,
            "author": self.author,
            "reason": self.reason,
            "parent": self.parent,
            "created_at": self.created_at,
            "content_hash": self.content_hash,
        }


def insert_version(conn: sqlite3.Connection, v: IdentityVersion) -> None:
    """Store one version as it is (history is append-only: a version is never rewritten)."""
    conn.execute(
        "INSERT INTO identity_version (doc, version, content, author_kind, author, reason, "
        "parent, created_at, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        astuple(v),
    )


@dataclass(frozen=True)
class RevertPreview:
    doc: str
    current_version: int
    target_version: int
    diff: str  # unified diff from the current version to the target
    token: str
    expires_at: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc": self.doc,
            "current_version": self.current_version,
            "target_version": self.target_version,
            "diff": self.diff,
            "token": self.token,
            "expires_at": self.expires_at,
        }


_SELECT = (
    "SELECT doc, version, content, author_kind, author, reason, parent, created_at, content_hash "
    "FROM identity_version"
)


def _row(r: Any) -> IdentityVersion:
    return IdentityVersion(r[0], int(r[1]), r[2], r[3], r[4], r[5], r[6], int(r[7]), r[8])


def check_doc(doc: object) -> str:
    """A document name: `user`, `soul:default` or `soul:<agent>`."""
    if not isinstance(doc, str) or not (doc in (USER, DEFAULT_SOUL) or _AGENT_DOC.fullmatch(doc)):
        raise InvalidInput(
            "document must be 'user', 'soul', 'soul:default' or 'soul:<agent name>'",
            data={"field": "doc"},
        )
    rule = secret_rule(doc)
    if rule is not None:  # a document's name is shown wherever it is (until 2026-11-30: kept)
        raise InvalidInput(
            f"the document name looks like a secret (rule {rule}); an agent's soul is named "
            "after the agent",
            data={"field": "doc", "rule": rule, "reason_code": "secret"},
        )
    return doc


def current_in(conn: Any, doc: str) -> IdentityVersion | None:
    row = conn.execute(f"{_SELECT} WHERE doc = ? ORDER BY version DESC LIMIT 1", (doc,)).fetchone()
    return _row(row) if row else None


class IdentityService:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        settings: Settings,
        *,
        gate: Gate,
        redactor: Redactor,
        proposals: Proposals,
    ) -> None:
        self._store = store
        self._clock = clock
        self._max_bytes = settings.integer("identity.max_bytes")
        self._gate = gate
        self._redactor = redactor
        self._proposals = proposals
        # Revert tokens are signed with a key that lives as long as this process: a preview
        # from before a restart cannot be applied after it.
        self._key = secrets.token_bytes(32)

    # -- seeding ----------------------------------------------------------------------------

    def seed(self) -> None:
        """First run: the neutral templates become version 1 of `soul:default` and `user`."""

        templates = ((DEFAULT_SOUL, "soul.md"), (USER, "user.md"))
        read = self._store.read_db.conn()
        if all(current_in(read, doc) is not None for doc, _ in templates):
            return  # every start after the first: no write transaction

        def job(tx: WriteTx) -> None:
            for doc, name in templates:
                if current_in(tx.conn, doc) is None:
                    text = (TEMPLATES / name).read_text(encoding="utf-8").strip() + "\n"
                    self._insert(
                        tx, doc, text, Caller.system(), "seeded from the template", parent=None
                    )

        self._store.writer.run(job)

    # -- reading ----------------------------------------------------------------------------

    def resolve(self, caller: Caller, doc: str) -> str:
        """`soul` means this agent's soul (or the shared default); other names as they are."""
        if doc == "soul":
            if caller.surface is Surface.AGENT and caller.agent:
                own = f"soul:{caller.agent}"
                if current_in(self._store.read_db.conn(), own) is not None:
                    return own
            return DEFAULT_SOUL
        return check_doc(doc)

    def get(self, caller: Caller, doc: str) -> IdentityVersion:
        """The current version - as a model may read it (flagged spans blocked, in its reason
        too) unless the caller is a person."""
        name = self.resolve(caller, doc)
        if (
            caller.surface is Surface.AGENT
            and name.startswith("soul:")
            and name not in (DEFAULT_SOUL, f"soul:{caller.agent}")
        ):  # the same answer whether it exists or not: agents cannot find out which do
            raise Forbidden("an agent reads its own soul, the default soul and the user profile")
        found = current_in(self._store.read_db.conn(), name)
        if found is None:
            raise NotFound(f"identity document {name!r} does not exist", data={"doc": name})
        if caller.is_human:
            return found
        text = self._redactor.text(found.content) or ""
        why = self._redactor.text(found.reason)
        return IdentityVersion(**{**found.to_dict(), "content": text, "reason": why})

    def documents(self, caller: Caller) -> list[IdentityVersion]:
        """The current version of every document (a person's view)."""
        _person(caller)
        rows = self._store.read_db.conn().execute(
            f"{_SELECT} v WHERE version = (SELECT max(version) FROM identity_version w "
            "WHERE w.doc = v.doc) ORDER BY doc"
        )
        return [_row(r) for r in rows]

    def history(self, caller: Caller, doc: str) -> list[IdentityVersion]:
        """Every version of one document, newest first (a person's view)."""
        _person(caller)
        name = check_doc(doc if doc != "soul" else DEFAULT_SOUL)
        rows = self._store.read_db.conn().execute(
            f"{_SELECT} WHERE doc = ? ORDER BY version DESC", (name,)
        )
        out = [_row(r) for r in rows]
        if not out:
            raise NotFound(f"identity document {name!r} does not exist", data={"doc": name})
        return out

    # -- changing ---------------------------------------------------------------------------

    def _sized(self, content: object) -> str:
        return check_document(content, self._max_bytes)

    def _checked(self, caller: Caller, content: object) -> tuple[str, tuple[Flag, ...]]:
        content = self._sized(content)
        verdict = self._gate.check_text(caller, {"content": content})
        if verdict.outcome is Outcome.REFUSE:
            data = {"field": "content"} | ({"reason_code": verdict.code} if verdict.code else {})
            raise InvalidInput(verdict.message or "refused", data=data)
        return content, verdict.flags

    def propose(
        self, caller: Caller, doc: str, content: object, reason: str | None = None
    ) -> WriteResult:
        """An agent's change to an identity document: it waits for a person (`pending`, with
        the suggestion id and the sentence the agent gets), or - capture paused - is refused
        like any write (`refused`, `capture_paused`): an answer, not an error.

        Raises:
            InvalidInput: not an agent, an unknown document, empty text, or a secret in it.
            Forbidden: another agent's soul.
            TooLarge: beyond `identity.max_bytes`.
        """
        if caller.surface is not Surface.AGENT:
            raise InvalidInput("a person edits identity documents directly (identity.edit)")
        name = f"soul:{caller.agent}" if doc == "soul" else check_doc(doc)
        if name.startswith("soul:") and name not in (DEFAULT_SOUL, f"soul:{caller.agent}"):
            raise Forbidden("an agent may propose changes to its own soul and the user profile")
        self._sized(content)
        paused = self._gate.paused(caller)
        if paused is not None:
            return paused.refused()
        text, flags = self._checked(caller, content)
        self._gate.refuse_secret({"reason": reason})

        def job(tx: WriteTx) -> Suggestion:
            now = self._clock.now_ms()
            base = current_in(tx.conn, name)
            suggestion = Suggestion(
                id=new_suggestion_id(now),
                op=Op.IDENTITY,
                agent=caller.actor,
                verified=caller.verified,
                target_id=name,
                base_revision=base.version if base else 0,
                content=text,
                reasons=(
                    Reason("identity", "identity documents change only with a person's say"),
                    *(Reason("scanner", f"{f.family}:{f.rule}") for f in flags),
                ),
                flags=flags,
                note=reason,
                first_seen=now,
                last_seen=now,
            )
            return self._proposals.propose(tx, caller, suggestion)

        kept = self._store.writer.run(job)
        return WriteResult(
            WriteStatus.PENDING,
            suggestion_id=kept.id,
            reason_code="identity",
            reason=waiting_because(kept),
        )

    def edit(
        self, caller: Caller, doc: str, content: object, *, if_version: int, reason: str | None
    ) -> IdentityVersion:
        """A person's new version. `if_version` is the version they edited (a stale one is a
        conflict, never a silent overwrite). The same text as the current version (its line
        breaks taken as every write stores them) makes no new version: the current one is
        returned."""
        _person(caller)
        name = check_doc(doc if doc != "soul" else DEFAULT_SOUL)
        text, _ = self._checked(caller, content)
        self._gate.refuse_secret({"reason": reason})

        def job(tx: WriteTx) -> IdentityVersion:
            current = current_in(tx.conn, name)
            have = current.version if current else 0
            if have != if_version:
                raise Conflict(
                    f"{name} is at version {have}, not {if_version}; read it again",
                    data={"doc": name, "current_version": have},
                )
            # a version stored before 2026-11-30 may hold CRLF: the same words are no change
            if current is not None and normalize_breaks(current.content) == text:
                return current
            return self._insert(tx, name, text, caller, reason, parent=current)

        return self._store.writer.run(job)

    def adopt_in(
        self, tx: WriteTx, person: Caller, s: Suggestion, content: str, *, if_version: int | None
    ) -> IdentityVersion:
        """Inside the review queue's adoption: the proposal becomes a new version, authored by
        the agent (or by the person, when they edited it) and decided by the person."""
        assert s.target_id is not None
        name = s.target_id
        text, _ = self._checked(person, content)
        current = current_in(tx.conn, name)
        have = current.version if current else 0
        base = if_version if if_version is not None else s.base_revision or 0
        if have != base:
            raise Conflict(
                f"{name} changed since the proposal was made (it is at version {have}, the "
                f"proposal at {base}); compare them, then adopt it onto version {have} or "
                "reject it",
                data={"doc": name, "current_revision": have, "proposed_on": base},
            )
        edited = text != s.content
        author = person if edited else Caller(Surface.AGENT, agent=s.agent, verified=s.verified)
        why = f"adopted from {s.agent}'s proposal" + (", edited" if edited else "")
        if s.note:
            why += f": {s.note}"
        return self._insert(tx, name, text, author, why, parent=current, decided_by=person.actor)

    def revert_preview(self, caller: Caller, doc: str, target_version: int) -> RevertPreview:
        """Step one: the diff from the current version to `target_version`, and a token that
        applies exactly this revert for a few minutes, if nothing changes meanwhile."""
        _person(caller)
        versions = {v.version: v for v in self.history(caller, doc)}
        current = max(versions.values(), key=lambda v: v.version)
        target = versions.get(target_version)
        if target is None:
            raise NotFound(
                f"{current.doc} has no version {target_version}",
                data={"doc": current.doc, "version": target_version},
            )
        if target.version == current.version:
            raise InvalidInput(f"version {target_version} is already the current one")
        if target.content == current.content:  # a revert would be a version changing nothing
            raise InvalidInput(
                f"version {target_version} has the same text as the current version "
                f"{current.version}; there is nothing to revert"
            )
        self._sized(target.content)  # a version from before a lower limit, or an import
        expires = self._clock.now_ms() + REVERT_TOKEN_SECONDS * 1000
        diff = "".join(
            difflib.unified_diff(
                current.content.splitlines(keepends=True),
                target.content.splitlines(keepends=True),
                fromfile=f"{current.doc} v{current.version} (now)",
                tofile=f"{current.doc} v{target.version}",
            )
        )
        return RevertPreview(
            current.doc,
            current.version,
            target.version,
            diff,
            self._sign(current.doc, current.version, target.version, expires),
            expires,
        )

    def revert_apply(self, caller: Caller, token: object) -> IdentityVersion:
        """Step two: apply a previewed revert. Refused when the token is unknown, expired, or
        the document changed since the preview."""
        _person(caller)
        doc, current_version, target_version, expires = self._verify(token)
        if self._clock.now_ms() > expires:
            raise Conflict("the revert preview expired; preview it again")

        def job(tx: WriteTx) -> IdentityVersion:
            current = current_in(tx.conn, doc)
            if current is None or current.version != current_version:
                raise Conflict(
                    f"{doc} changed since the preview (now version "
                    f"{current.version if current else 0}); preview the revert again",
                    data={"doc": doc},
                )
            row = tx.conn.execute(
                f"{_SELECT} WHERE doc = ? AND version = ?", (doc, target_version)
            ).fetchone()
            target = _row(row)
            return self._insert(
                tx,
                doc,
                target.content,
                caller,
                f"revert to version {target_version}",
                parent=current,
            )

        return self._store.writer.run(job)

    # -- internals --------------------------------------------------------------------------

    def _insert(
        self,
        tx: WriteTx,
        doc: str,
        content: str,
        author: Caller,
        reason: str | None,
        *,
        parent: IdentityVersion | None,
        decided_by: str | None = None,
    ) -> IdentityVersion:
        now = self._clock.now_ms()
        version = IdentityVersion(
            doc=doc,
            version=(parent.version if parent else 0) + 1,
            content=content,
            author_kind=_AUTHOR_KINDS[author.surface],
            author=author.actor,
            reason=reason,
            parent=parent.version if parent else None,
            created_at=now,
            content_hash=content_hash(content),
        )
        insert_version(tx.conn, version)
        detail: dict[str, Any] = {"doc": doc, "version": version.version}
        if decided_by:
            detail["decided_by"] = decided_by
        audit.record(tx, author, "identity_version", detail=detail, at=now)
        return version

    def _sign(self, doc: str, current: int, target: int, expires: int) -> str:
        body = json.dumps([doc, current, target, expires], separators=(",", ":"))
        mac = hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()
        return f"{body.encode().hex()}.{mac}"

    def _verify(self, token: object) -> tuple[str, int, int, int]:
        if not isinstance(token, str) or "." not in token:
            raise InvalidInput("not a revert token", data={"field": "token"})
        body_hex, mac = token.rsplit(".", 1)
        try:
            body = bytes.fromhex(body_hex)
        except ValueError as e:
            raise InvalidInput("not a revert token", data={"field": "token"}) from e
        expected = hmac.new(self._key, body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(mac, expected):
            raise InvalidInput(
                "this revert token was not issued by this Cairn (or Cairn restarted since the "
                "preview); preview the revert again",
                data={"field": "token"},
            )
        doc, current, target, expires = json.loads(body)
        return str(doc), int(current), int(target), int(expires)


def _person(caller: Caller) -> None:
    if not caller.is_human:
        raise Forbidden(
            "only a person can edit, revert or read the history of identity documents: agents "
            "read them and propose changes"
        )
