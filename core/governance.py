"""The gate every write passes: pause and `off` first, then the scanner, then the capture policy.

The order is the written precedence (docs/governance.md):

1. An agent's write while capture is paused is refused (`capture_paused`); so is an agent's write
   of a kind whose policy is `off` (`policy_refused`). Nothing is stored, not even a proposal.
2. A secret in any field is refused (`secret`) whoever writes it; the answer names the rule,
   never the secret. That includes what is stored beside a memory's words - a reason, a note, a
   dedupe or idempotency key (`notes`): their other findings change nothing, and are redacted
   on every read that can reach a model.
3. Suspected prompt injection, exfiltration or hidden control characters: an agent's write waits
   for review whatever its kind's policy; a person's write is stored, flagged, and redacted on
   every read that can reach a model.
4. The capture policy: `ask` sends an agent's write to review; `auto` lets it land.

Ownership (an agent changing what is not its own) and near-duplicates are decided by the memory
service, which can see the store; this module needs none.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from core import scanner
from core.errors import CallerError, InvalidInput, TooLarge
from core.model import (
    Caller,
    Memory,
    Origin,
    Relation,
    Revision,
    Scope,
    Surface,
    WriteResult,
    WriteStatus,
)
from core.policy import Mode, Policy
from core.suggestions import Flag, Reason
from core.validation import refuse_control


class Outcome(StrEnum):
    STORE = "store"
    QUEUE = "queue"
    REFUSE = "refuse"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    reasons: tuple[Reason, ...] = ()
    flags: tuple[Flag, ...] = ()
    code: str | None = None  # why a write was refused: capture_paused, policy_refused, secret
    message: str | None = None

    def refused(self) -> WriteResult:
        return WriteResult(WriteStatus.REFUSED, reason_code=self.code, reason=self.message)


def memory_fields(memory: Memory) -> dict[str, str | None]:
    """Every text field of a memory the scanner reads (the agent's name too)."""
    return {
        "content": memory.content,
        "summary": memory.summary,
        "tags": "\n".join(memory.tags) if memory.tags else None,
        "keywords": memory.keywords,
        "source": memory.source,
        "agent": memory.agent,
    }


# Fields whose short values recur write after write (a few tags, one agent's name, a source).
_RECURRING_FIELDS = frozenset({"tags", "agent", "source"})
_SHORT_FIELD_CHARS = 64


MAX_NOTE_CHARS = 1000  # a reason or a note beside a memory's words (a key has its own limit)


class Gate:
    """Decides what happens to one write. `policy` returns the policy in effect; `allowed`
    returns the fingerprints a person allowlisted."""

    def __init__(self, policy: Callable[[], Policy], allowed: Callable[[], frozenset[str]]) -> None:
        self._policy = policy
        self._allowed = allowed
        # The scanner is a pure function of the text: a recurring short value is scanned once.
        self._scan_recurring = functools.lru_cache(maxsize=4096)(scanner.scan)

    def scan(self, fields: Mapping[str, str | None]) -> tuple[tuple[Flag, ...], Flag | None]:
        """Findings over every field (allowlisted ones left out), and the first secret."""
        allowed = self._allowed()
        flags: list[Flag] = []
        secret: Flag | None = None
        for name, text in fields.items():
            if not text:
                continue
            recurring = name in _RECURRING_FIELDS and len(text) <= _SHORT_FIELD_CHARS
            for finding in self._scan_recurring(text) if recurring else scanner.scan(text):
                if scanner.passes(finding, allowed):
                    continue
                flag = Flag(name, finding.family.value, finding.rule, finding.fingerprint)
                if finding.family is scanner.Family.SECRET and secret is None:
                    secret = flag
                flags.append(flag)
        return tuple(dict.fromkeys(flags)), secret

    def secret_in(self, notes: Mapping[str, str | None]) -> Verdict | None:
        """The refusal for the first secret in `notes` - text stored beside a memory's words (a
        reason, a note, a key, an identifier) - or None. Other findings do not refuse: such text
        is redacted on every read that can reach a model.

        Raises:
            TooLarge: a note longer than MAX_NOTE_CHARS (it is kept in history, shown to the
                person and to agents: until 2026-11-30 an 800 KB reason was).
        """
        check_notes(notes)
        _, secret = self.scan(notes)
        return secret_refused(secret) if secret is not None else None

    def refuse_secret(self, notes: Mapping[str, str | None]) -> None:
        """`secret_in` for a method whose answer is not a write's status (a contradiction,
        feedback, an identity proposal, a hello): the refusal is raised.

        Raises:
            InvalidInput: `notes` holds a secret; `data` names the field and the rule, and has
                `reason_code: "secret"`.
        """
        refusal = self.secret_in(notes)
        if refusal is not None:
            [secret] = refusal.flags
            raise InvalidInput(
                refusal.message or "a secret",
                data={"field": secret.field, "rule": secret.rule, "reason_code": "secret"},
            )

    def paused(self, caller: Caller, policy: Policy | None = None) -> Verdict | None:
        """The refusal for an agent's write while capture is paused (in `policy`, or the one in
        effect); None otherwise."""
        if caller.surface is Surface.AGENT and (policy or self._policy()).paused:
            return Verdict(
                Outcome.REFUSE,
                code="capture_paused",
                message="capture is paused by the person in charge; nothing was changed",
            )
        return None

    def check_text(self, caller: Caller, fields: Mapping[str, str | None]) -> Verdict:
        """The gate for text that is not a memory (identity documents, notes): pause for an
        agent, secrets refused, findings flagged - no capture policy."""
        paused = self.paused(caller)
        if paused is not None:
            return paused
        flags, secret = self.scan(fields)
        if secret is not None:
            return secret_refused(secret)
        return Verdict(Outcome.QUEUE if flags else Outcome.STORE, flags=flags)

    def check(
        self,
        caller: Caller,
        *,
        kind: str,
        scope: Scope,
        origin: Origin | None,
        fields: Mapping[str, str | None],
        notes: Mapping[str, str | None] | None = None,
        rule_kind: bool = True,
        rule_scope: bool = True,
    ) -> Verdict:
        """The verdict for one write (or update) by `caller`. `notes` is what the write stores
        beside the memory (its reason, its keys): a secret there is refused like one in the
        memory (`secret_in`), and so is one over MAX_NOTE_CHARS. For an update, `rule_kind` and
        `rule_scope` say whether the kind changed and the scope widened: only then does the
        policy decide again.

        Raises:
            TooLarge: a note longer than MAX_NOTE_CHARS (until 2026-11-30 an update's reason
                was taken at any length).
        """
        if notes:
            check_notes(notes)
        agent = caller.surface is Surface.AGENT
        policy = self._policy()  # read once: the pause and the rules of one policy
        paused = self.paused(caller, policy)
        if paused is not None:
            return paused
        ruling = None
        if agent:
            ruling = policy.rule(
                agent=caller.agent,
                verified=caller.registered,
                kind=kind if rule_kind else None,
                scope=scope if rule_scope else None,
                extracted=origin is Origin.EXTRACTED and rule_kind,
            )
            if ruling.mode is Mode.OFF:
                what = ", ".join(ruling.reasons)
                return Verdict(
                    Outcome.REFUSE,
                    code="policy_refused",
                    message=f"the capture policy turns this off ({what}); nothing was stored",
                )
        flags, secret = self.scan(fields)
        if secret is None and notes:
            _, secret = self.scan(notes)
        if secret is not None:
            return secret_refused(secret)
        if flags and agent:
            return Verdict(
                Outcome.QUEUE,
                reasons=tuple(
                    dict.fromkeys(Reason("scanner", f"{f.family}:{f.rule}") for f in flags)
                ),
                flags=flags,
            )
        if ruling is not None and ruling.mode is Mode.ASK:
            return Verdict(
                Outcome.QUEUE,
                reasons=tuple(Reason("policy", why) for why in ruling.reasons),
                flags=flags,
            )
        return Verdict(Outcome.STORE, flags=flags)


def check_note(
    name: str,
    text: str | None,
    *,
    limit: int = MAX_NOTE_CHARS,
    too_long: type[CallerError] = TooLarge,
    limit_words: str = "the limit is {limit}",
    field: str | None = None,
    controls: bool = True,
) -> None:
    """A note beside a memory's words (a reason, feedback's note) fits what is kept.

    Args:
        name: what the caller called it (the CLI's `--reason`), named in the message.
        limit: the most characters kept; `limit_words` says it in the message, `{limit}`
            standing for the number.
        too_long: the error a longer note raises.
        field: when given, the error's data names it with the note's size and the limit;
            otherwise it names `name` alone.
        controls: whether a control character is refused (an escape sequence in a reason
            reached the person's terminal as it was, until 2026-11-30).

    Raises:
        `too_long`: the note is longer than `limit`, naming its length.
        InvalidInput: the note holds a control character (when `controls`).
    """
    if text is None:
        return
    if len(text) > limit:
        data = (
            {"field": name}
            if field is None
            else {"field": field, "size": len(text), "limit": limit}
        )
        raise too_long(
            f"{name} is {len(text)} characters; {limit_words.format(limit=limit)}", data=data
        )
    if controls:
        refuse_control(name, text)


def check_notes(notes: Mapping[str, str | None]) -> None:
    """`check_note` on each of `notes`, named by its key: TooLarge for one longer than
    MAX_NOTE_CHARS, InvalidInput for one holding a control character."""
    for name, text in notes.items():
        check_note(name, text)


def secret_refused(secret: Flag) -> Verdict:
    """The refusal of a write holding `secret`, naming the field and the rule (never the text)."""
    return Verdict(
        Outcome.REFUSE,
        flags=(secret,),
        code="secret",
        message=secret_sentence(
            f"the {secret.field}", secret.rule, plural=secret.field in _PLURAL_FIELDS
        ),
    )


def secret_sentence(subject: str, rule: str, *, plural: bool = False) -> str:
    """Why `subject` (a field, an option) is refused for holding a secret, naming the rule."""
    return (
        f"{subject} {describe_rule(rule, plural=plural)}; secrets are never stored - keep it in "
        "your keychain or a secret manager"
    )


_PLURAL_FIELDS = frozenset({"tags", "keywords"})  # "the tags look like", not "looks like"


def describe_rule(rule: str, *, plural: bool = False) -> str:
    """`looks like <what> (rule <id>)` for a rule id, never any matched text (`look like` when
    it is said of a plural)."""
    family = scanner.RULES.get(rule)
    what = (
        {
            scanner.Family.SECRET: "a secret",
            scanner.Family.INJECTION: "an instruction aimed at a model (prompt injection)",
            scanner.Family.EXFILTRATION: "an instruction to send data away (exfiltration)",
            scanner.Family.HYGIENE: "hidden or direction-changing characters",
        }.get(family, "something the scanner blocks")
        if family
        else "something the scanner blocks"
    )
    return f"{'look' if plural else 'looks'} like {what} (rule {rule})"


# -- reads that can reach a model --------------------------------------------------------------


class Redactor:
    """Memories as a model may read them: every span the scanner flags (and a person has not
    allowlisted) replaced by `[BLOCKED: rule]`, in every text field. Results are cached per
    memory revision and allowlist generation."""

    def __init__(self, allowed: Callable[[], frozenset[str]], size: int = 20_000) -> None:
        self._allowed = allowed
        self._size = size
        # A memory with nothing to redact is cached as None: the memory read is then served as
        # it is, and no copy of it is kept (the cache held 20,000 memories' words).
        self._cache: OrderedDict[tuple[str, int, str, frozenset[str]], Memory | None] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def memory(self, memory: Memory) -> Memory:
        allowed = self._allowed()
        key = (memory.id, memory.revision, memory.content[:64], allowed)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                hit = self._cache[key]
                if hit is None:
                    return memory
                return replace(
                    hit,
                    use_count=memory.use_count,
                    last_recalled_at=memory.last_recalled_at,
                    expired=memory.expired,
                    status=memory.status,
                    pinned=memory.pinned,
                )
        clean = self._redact(memory, allowed)
        with self._lock:
            self._cache[key] = None if clean is memory else clean
            if len(self._cache) > self._size:
                self._cache.popitem(last=False)
        return clean

    def text(self, text: str | None) -> str | None:
        if not text:
            return text
        return scanner.redact(text, allowed=self._allowed())

    def revision(self, revision: Revision) -> Revision:
        """A revision as a model may read it: its words and its reason redacted."""
        return replace(
            revision,
            content=self.text(revision.content) or "",
            summary=self.text(revision.summary),
            tags=tuple(self.text(t) or "" for t in revision.tags),
            keywords=self.text(revision.keywords),
            reason=self.text(revision.reason),
        )

    def relation(self, relation: Relation) -> Relation:
        """A relation as a model may read it: its note redacted."""
        note = self.text(relation.note)
        return relation if note == relation.note else replace(relation, note=note)

    @staticmethod
    def _redact(memory: Memory, allowed: frozenset[str]) -> Memory:
        def clean(text: str | None) -> str | None:
            return scanner.redact(text, allowed=allowed) if text else text

        content = clean(memory.content) or ""
        summary = clean(memory.summary)
        tags = tuple(clean(t) or "" for t in memory.tags)
        keywords = clean(memory.keywords)
        source = clean(memory.source)
        dedupe_key = clean(memory.dedupe_key)
        if (content, summary, tags, keywords, source, dedupe_key) == (
            memory.content,
            memory.summary,
            memory.tags,
            memory.keywords,
            memory.source,
            memory.dedupe_key,
        ):
            return memory
        return replace(
            memory,
            content=content,
            summary=summary,
            tags=tags,
            keywords=keywords,
            source=source,
            dedupe_key=dedupe_key,
            flags=tuple(dict.fromkeys((*memory.flags, "redacted"))),
        )


def flagged(memory: Memory, verdict: Verdict) -> Memory:
    """The memory with the scanner's findings noted (`scan:<rule>`), for the windows to show."""
    if not verdict.flags:
        return memory
    marks = tuple(dict.fromkeys(f"scan:{f.rule}" for f in verdict.flags))
    return replace(memory, flags=tuple(dict.fromkeys((*memory.flags, *marks))))
