"""Scanner findings a person has allowed: a documentation example key, a quoted attack in a
security note. Each is one finding's fingerprint (its rule and exact text, hashed), so the same
text passes everywhere and nothing else does. Allowing and removing are audited."""

from __future__ import annotations

import threading

from core import audit
from core.clock import Clock
from core.errors import Forbidden, InvalidInput, NotFound
from core.governance import check_notes, secret_sentence
from core.model import Caller
from core.scanner import RULES, Family, secret_rule
from core.store import Store
from core.writer import WriteTx


class Allowlist:
    def __init__(self, store: Store, clock: Clock) -> None:
        self._store = store
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: frozenset[str] | None = None

    def fingerprints(self) -> frozenset[str]:
        """Every allowed fingerprint (cached until the list changes)."""
        with self._lock:
            cached = self._cached
        if cached is not None:
            return cached
        rows = self._store.read_db.conn().execute("SELECT fingerprint FROM scan_allow")
        fresh = frozenset(r[0] for r in rows)
        with self._lock:
            self._cached = fresh
        return fresh

    def entries(self, caller: Caller) -> list[dict[str, object]]:
        _person(caller)
        rows = self._store.read_db.conn().execute(
            "SELECT fingerprint, rule, note, allowed_by, allowed_at FROM scan_allow "
            "ORDER BY allowed_at DESC"
        )
        keys = ("fingerprint", "rule", "note", "allowed_by", "allowed_at")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def allow(self, caller: Caller, fingerprint: str, rule: str, note: str | None = None) -> None:
        """Allow one finding everywhere. Secrets cannot be allowed."""
        _person(caller)
        self._store.writer.run(
            lambda tx: self.allow_in(
                tx, caller, fingerprint, rule, now=self._clock.now_ms(), note=note
            )
        )

    def allow_in(
        self,
        tx: WriteTx,
        caller: Caller,
        fingerprint: str,
        rule: str,
        *,
        now: int,
        note: str | None = None,
    ) -> None:
        if RULES.get(rule) is None:
            raise InvalidInput(f"unknown scanner rule {rule!r}", data={"field": "rule"})
        if RULES[rule] is Family.SECRET:
            raise InvalidInput(
                "a secret cannot be allowlisted: remove it from the text instead",
                data={"field": "rule"},
            )
        if len(fingerprint) != 16 or any(c not in "0123456789abcdef" for c in fingerprint):
            raise InvalidInput("not a finding's fingerprint", data={"field": "fingerprint"})
        # The note is kept and listed to the person like any other: checked like one (until
        # 2026-11-30 a token, an escape sequence or 900 KB were stored as sent).
        check_notes({"note": note})
        secret = secret_rule(note) if note else None
        if secret is not None:
            raise InvalidInput(
                secret_sentence("the note", secret),
                data={"field": "note", "rule": secret, "reason_code": "secret"},
            )
        tx.conn.execute(
            "INSERT INTO scan_allow (fingerprint, rule, note, allowed_by, allowed_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(fingerprint) DO NOTHING",
            (fingerprint, rule, note, caller.actor, now),
        )
        audit.record(
            tx, caller, "scan_allow", detail={"fingerprint": fingerprint, "rule": rule}, at=now
        )
        tx.after_commit.append(self._forget_cache)

    def remove(self, caller: Caller, fingerprint: str) -> None:
        _person(caller)

        def job(tx: WriteTx) -> None:
            cur = tx.conn.execute("DELETE FROM scan_allow WHERE fingerprint = ?", (fingerprint,))
            if cur.rowcount == 0:
                raise NotFound(f"no allowed finding {fingerprint}")
            audit.record(
                tx,
                caller,
                "scan_unallow",
                detail={"fingerprint": fingerprint},
                at=self._clock.now_ms(),
            )
            tx.after_commit.append(self._forget_cache)

        self._store.writer.run(job)

    def _forget_cache(self) -> None:
        with self._lock:
            self._cached = None


def _person(caller: Caller) -> None:
    if not caller.is_human:
        raise Forbidden("only a person can change what the scanner lets through")
