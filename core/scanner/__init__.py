"""The write and read scanner: finds secrets, prompt injection, exfiltration and hidden characters.

This module holds the API (`scan`, `redact`, `describe`, `RULES`) and the engine that runs the
patterns; `text.py` folds text for matching, `secrets.py` and `instructions.py` judge candidates
in context, `patterns.py` is the table of every rule's regex, trigger words and check.

A pure module (standard library only) shared by every write path and every read that can reach a
model. `scan` reports findings with spans in the caller's text; `redact` replaces them with
`[BLOCKED: rule]`; `describe` names a finding without ever repeating what it matched.

How matching works, and why:

* Text is folded before matching: NFKC per character (full-width letters and digits, ligatures and
  mathematical letters become ASCII), a few Cyrillic/Greek look-alikes become Latin, invisible and
  direction characters are dropped and Unicode tag characters are decoded to the ASCII they hide.
  Full-width and CJK punctuation (，：（ and the like) is left as it is - the patterns accept it -
  because folding it would cost more than all the matching on Chinese text. An index map built
  while folding turns every span back into one over the original text.
* Every English or code pattern starts with a literal, so the regex engine skips through text at
  memchr-like speed, and most run only when their trigger words occur in the text (one split of
  the text into words decides that for all of them). Chinese patterns are not searched at all:
  one finder pass reports where their trigger words are and each pattern is matched only there.
* Every gap is bounded and possessive quantifiers stop backtracking into runs. Context (an
  imperative position, a credential word, a documentary framing) is judged in Python on the few
  candidates, never by open-ended regexes.
* Texts longer than MAX_SCAN_CHARS are matched window by window, each window overlapping the next
  by WINDOW_OVERLAP_CHARS, longer than any pattern can match: scan time grows linearly with length
  and no match is lost at a window edge.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from core.scanner.patterns import _PATTERNS, _Pattern, _zh_finder
from core.scanner.secrets import Hit
from core.scanner.text import (
    SAFE_RANGES,
    _fold,
    _fold_char,
    _hygiene,
    _Text,
    fold_spaced,
    joins_words,
)

# The regex engine sees at most MAX_SCAN_CHARS at a time; longer texts are scanned in windows
# overlapping by WINDOW_OVERLAP_CHARS, more than any pattern can match (a test checks that).
MAX_SCAN_CHARS = 65_536
WINDOW_OVERLAP_CHARS = 8_192


class Family(StrEnum):
    """What kind of harm a finding stands for."""

    SECRET = "secret"  # noqa: S105 - a family's name, not a password
    INJECTION = "injection"
    EXFILTRATION = "exfiltration"
    HYGIENE = "hygiene"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the scanner flags. `start`/`end` index the text given to `scan`; `fingerprint`
    identifies this rule on this matched text (for an allowlist) without storing the text."""

    family: Family
    rule: str
    start: int
    end: int
    fingerprint: str


_S, _I, _X, _H = Family.SECRET, Family.INJECTION, Family.EXFILTRATION, Family.HYGIENE
# Each rule, its family and how `describe` names it.
_RULE_TABLE: dict[str, tuple[Family, str]] = {
    "openai-key": (_S, "looks like an OpenAI API key"),
    "anthropic-key": (_S, "looks like an Anthropic API key"),
    "deepseek-key": (_S, "looks like a DeepSeek API key"),
    "openrouter-key": (_S, "looks like an OpenRouter API key"),
    "github-token": (_S, "looks like a GitHub token"),
    "gitlab-token": (_S, "looks like a GitLab token"),
    "slack-token": (_S, "looks like a Slack token"),
    "slack-webhook": (_S, "looks like a Slack incoming-webhook URL"),
    "stripe-key": (_S, "looks like a Stripe secret, restricted or webhook key"),
    "google-api-key": (_S, "looks like a Google API key"),
    "google-oauth-secret": (_S, "looks like a Google OAuth client secret"),
    "aws-access-key": (_S, "looks like an AWS access key id"),
    "aws-secret-key": (_S, "looks like an AWS secret access key"),
    "huggingface-token": (_S, "looks like a Hugging Face token"),
    "twilio-api-key": (_S, "looks like a Twilio API key"),
    "npm-token": (_S, "looks like an npm access token"),
    "cairn-token": (_S, "looks like a Cairn agent token"),
    "sendgrid-key": (_S, "looks like a SendGrid API key"),
    "pypi-token": (_S, "looks like a PyPI upload token"),
    "azure-storage-key": (_S, "looks like an Azure storage account key"),
    "alibaba-access-key": (_S, "looks like an Alibaba Cloud AccessKey id"),
    "groq-key": (_S, "looks like a Groq API key"),
    "private-key-block": (_S, "contains a private key block"),
    "jwt": (_S, "contains a signed JSON Web Token"),
    "url-password": (_S, "contains a password inside a URL"),
    "connection-string-password": (_S, "contains a password in a connection string"),
    "auth-header": (_S, "contains an HTTP Authorization credential"),
    "password-assignment": (_S, "assigns a literal password"),
    "credential-assignment": (_S, "assigns a high-entropy value to a credential"),
    "ignore-previous-en": (_I, "tells a model to ignore its previous instructions"),
    "ignore-previous-zh": (_I, "tells a model (in Chinese) to ignore its instructions"),
    "fake-system-marker": (_I, "imitates a system or chat-template marker"),
    "role-takeover-en": (_I, "tries to give a model a new role or persona"),
    "role-takeover-zh": (_I, "tries (in Chinese) to give a model a new role"),
    "tool-call-coercion": (_I, "tells a model to call a tool or run commands"),
    "tool-call-coercion-zh": (_I, "tells a model (in Chinese) to call a tool or run commands"),
    "destructive-command": (_I, "tells a model to run a destructive shell command"),
    "new-system-prompt": (_I, "announces a new system prompt or new instructions"),
    "prompt-extraction-en": (_I, "asks a model to reveal its system prompt"),
    "prompt-extraction-zh": (_I, "asks a model (in Chinese) to reveal its prompt"),
    "send-data-to-url": (_X, "tells a model to send sensitive data somewhere"),
    "send-data-zh": (_X, "tells a model (in Chinese) to send sensitive data somewhere"),
    "markdown-image-beacon": (_X, "has an image URL that can carry data out when fetched"),
    "shell-exfiltration": (_X, "has a shell command that ships secrets or credential files out"),
    "bidi-control": (_H, "contains bidirectional control characters"),
    "invisible-char": (_H, "contains invisible characters (zero-width, format or filler)"),
    "tag-char": (_H, "contains Unicode tag characters (invisible text)"),
}
RULES: Mapping[str, Family] = MappingProxyType({k: v[0] for k, v in _RULE_TABLE.items()})
# The shape of every rule's name, this Cairn's and a newer one's (an archive's `scan:` marks may
# name a rule this one lacks): lower-case ASCII words joined by '-'. A test holds RULES to it.
RULE_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
MAX_RULE_CHARS = 40
# Rules that only guess from context: dropped where a specific rule matched the same value.
_GENERIC = frozenset({"credential-assignment", "password-assignment", "auth-header"})
_FAMILY_WORDS = {
    _S: "Possible secret",
    _I: "Possible prompt injection",
    _X: "Possible data exfiltration",
    _H: "Hidden characters",
}


_ZH_FINDER, _ZH_DISPATCH = _zh_finder(_PATTERNS)
_SEARCHED = tuple(p for p in _PATTERNS if not p.zh)
_LETTERS_ONLY = bytes(c if 97 <= c <= 122 else 32 for c in range(256))


@dataclass(frozen=True)
class _WordGates:
    """The `words` gates of some searched patterns, inverted: from a text's words straight to the
    patterns that may run, instead of testing every pattern's gate (most texts open none)."""

    searched: tuple[_Pattern, ...]
    ungated: tuple[_Pattern, ...]
    ungated_ids: frozenset[int]
    by_word: Mapping[bytes, tuple[int, ...]]  # gate word -> indexes in `searched`
    gate_words: frozenset[bytes]

    @staticmethod
    def of(searched: tuple[_Pattern, ...]) -> _WordGates:
        by_word: dict[bytes, list[int]] = {}
        for i, pattern in enumerate(searched):
            for word in pattern.words:
                by_word.setdefault(word, []).append(i)
        return _WordGates(
            searched,
            tuple(p for p in searched if not p.words),
            frozenset(i for i, p in enumerate(searched) if not p.words),
            MappingProxyType({w: tuple(ids) for w, ids in by_word.items()}),
            frozenset(by_word),
        )

    def open(self, words: frozenset[bytes]) -> Sequence[_Pattern]:
        """The patterns `words` let run, in `searched` order (`also` gates not yet applied)."""
        opened = words & self.gate_words
        if not opened:
            return self.ungated
        ids = set(self.ungated_ids)
        for word in opened:
            ids.update(self.by_word[word])
        return [self.searched[i] for i in sorted(ids)]


_GATES = _WordGates.of(_SEARCHED)


# -- the API -------------------------------------------------------------------------------------


def _windows(n: int) -> Iterator[tuple[int, int]]:
    if n <= MAX_SCAN_CHARS:
        yield 0, n
        return
    step = MAX_SCAN_CHARS - WINDOW_OVERLAP_CHARS
    start = 0
    while True:
        end = min(n, start + MAX_SCAN_CHARS)
        yield start, end
        if end == n:
            return
        start += step


def _words(low: str) -> frozenset[bytes]:
    """The text's words (runs of ASCII letters): which gated patterns can match at all."""
    data = low.encode("ascii", "replace") if not low.isascii() else low.encode("ascii")
    return frozenset(data.translate(_LETTERS_ONLY).split())


def _hits(t: _Text) -> set[Hit]:
    """Every pattern's hits (empty spans included; `_prune` drops them)."""
    hits: set[Hit] = set()
    windows = list(_windows(len(t.norm)))
    words = _words(t.low)
    for pattern in _GATES.open(words):
        if pattern.also and pattern.also.isdisjoint(words):
            continue
        subject = t.low if pattern.low else t.norm
        for ws, we in windows:
            for m in pattern.regex.finditer(subject, ws, we):
                found = pattern.check(t, m)
                if found:
                    hits.update(found)
    if not t.low.isascii():
        for ws, we in windows:
            _zh_hits(t, ws, we, hits)
    return hits


def _zh_hits(t: _Text, ws: int, we: int, hits: set[Hit]) -> None:
    """The Chinese patterns, tried only where the finder saw one of their anchors."""
    low = t.low
    search = _ZH_FINDER.search
    found = search(low, ws, we)
    while found is not None:
        pos = found.start()
        for pattern in _ZH_DISPATCH[found.group()]:
            at = pattern.regex.match(low, pos, we)
            if at is not None:
                result = pattern.check(t, at)
                if result:
                    hits.update(result)
        # On from the next character, not the match's end: anchors can nest (你的新系统).
        found = search(low, pos + 1, we)


_MERGE_GAP = 16  # instructions of one rule this close together are one finding


def _prune(hits: set[Hit]) -> list[Hit]:
    """Merge overlapping hits of one rule (window edges, triggers found twice) into one - and for
    instructions, hits of one rule at most _MERGE_GAP apart, so that repeating a short trigger
    yields one finding, not thousands; each secret stays its own finding (its own fingerprint).
    Then drop a generic secret guess where a specific secret rule matched the same value."""
    merged: list[Hit] = []
    last: dict[str, int] = {}  # rule -> index in merged of its latest hit
    for rule, s, e in sorted((h for h in hits if h[2] > h[1]), key=lambda h: (h[1], -h[2], h[0])):
        i = last.get(rule)
        gap = -1 if RULES[rule] is _S else _MERGE_GAP
        if i is not None and s <= merged[i][2] + gap:
            merged[i] = (rule, merged[i][1], max(e, merged[i][2]))
            continue
        last[rule] = len(merged)
        merged.append((rule, s, e))
    specific = sorted((s, e) for r, s, e in merged if RULES[r] is _S and r not in _GENERIC)
    starts = [s for s, _ in specific]
    reach: list[int] = []  # reach[i]: the furthest end among specific[0..i]
    for _, e in specific:
        reach.append(max(e, reach[-1]) if reach else e)

    def covered(s: int, e: int) -> bool:
        i = bisect.bisect_left(starts, e)  # specific hits starting before e
        return i > 0 and reach[i - 1] > s

    return [(r, s, e) for r, s, e in merged if r not in _GENERIC or not covered(s, e)]


@functools.lru_cache(maxsize=4096)  # a hidden character repeated is one fingerprint, many times
def _fingerprint(rule: str, matched: str) -> str:
    data = (rule + "\0" + matched).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:16]


def _overlaps(sorted_spans: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) overlaps one of `sorted_spans` (sorted, none inside another)."""
    i = bisect.bisect_left(sorted_spans, (end, end))
    return i > 0 and sorted_spans[i - 1][1] > start


def scan(text: str) -> tuple[Finding, ...]:
    """Every finding in `text`, sorted by start (then longest first).

    Args:
        text: any string; lone surrogates, control characters and huge inputs are all fine.

    Returns:
        Findings whose spans index `text` itself, however folding changed lengths.
    """
    if not text:
        return ()
    t = _fold(text)
    raw = _hits(t)
    if not raw and not t.hidden:  # nearly every text: nothing to map back or to report
        return ()
    hits = _prune(raw)
    identity = len(t.starts) == 1  # nothing folded to another length: spans are the same
    spans = hits if identity else [(rule, *t.span(s, e)) for rule, s, e in hits]
    hidden = list(_hygiene(text, t.hidden))
    if t.hidden and joins_words(text):
        # A hidden character dropped joins the words it stood between; read as a space, it
        # parts them: the patterns look again at that reading (as long as the text, so its
        # spans are the text's), and keep what the first look did not find. Only when one
        # stands between two letters or digits: beside a space, a full stop or an emoji,
        # dropping it joins nothing.
        t2 = fold_spaced(text, t)
        found: dict[str, list[tuple[int, int]]] = {}
        for rule, s, e in spans:
            found.setdefault(rule, []).append((s, e))
        for spans_of_rule in found.values():
            spans_of_rule.sort()
        for rule, s2, e2 in _prune(_hits(t2)):
            s, e = t2.span(s2, e2)
            if not _overlaps(found.get(rule, []), s, e):
                spans.append((rule, s, e))
                raw.add((rule, s, e))
    spans.extend(hidden)
    n = len(text)
    # Sorted by start, longest first, then rule: as tuples, with no key function (a text of
    # scattered hidden characters has one finding per character).
    order = [(s, -e, rule) for rule, s, e in spans if 0 <= s < e <= n]
    order.sort()  # runs already in order (each rule's hidden characters): little to do
    if raw:  # two rules' hits are never equal; one rule's can be after mapping back
        order = list(dict.fromkeys(order))
    return tuple(
        Finding(RULES[rule], rule, s, -ne, _fingerprint(rule, text[s:-ne])) for s, ne, rule in order
    )


def passes(finding: Finding, allowed: Collection[str]) -> bool:
    """Whether a person's allowlist lets `finding` pass: its fingerprint is allowed and it is
    not a secret. A secret never passes: the allowlist refuses a secret's rule, but a fingerprint
    is only a hash - a secret's filed under another rule's name made the gate skip the secret
    and store it (until 2026-11-30)."""
    return finding.family is not Family.SECRET and finding.fingerprint in allowed


def _replace(text: str, findings: Sequence[Finding], allowed: Collection[str]) -> str:
    spans = sorted(
        (
            (max(0, f.start), min(len(text), f.end), f.rule)
            for f in findings
            if not passes(f, allowed) and min(len(text), f.end) > max(0, f.start)
        ),
        key=lambda s: (s[0], -s[1], s[2]),
    )
    out: list[str] = []
    pos = i = 0
    while i < len(spans):
        start, end, rule = spans[i]
        i += 1
        while i < len(spans) and spans[i][0] < end:  # overlapping: one marker, the first rule
            end = max(end, spans[i][1])
            i += 1
        out.append(text[pos:start])
        out.append(f"[BLOCKED: {rule}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact(
    text: str, findings: Sequence[Finding] | None = None, *, allowed: Collection[str] = ()
) -> str:
    """`text` with each finding's span replaced by `[BLOCKED: <rule>]`.

    Args:
        text: the text the findings were made on.
        findings: what to replace; None scans `text` first, and scans the result again until
            nothing (but allowlisted findings) is left, so a redaction never exposes a new match.
        allowed: fingerprints a person allowlisted; those findings stay as they are (never a
            secret: `passes`).

    Returns:
        The redacted text. Overlapping spans merge into one marker naming the first rule.
    """
    if findings is not None:
        return _replace(text, findings, allowed)
    for _ in range(8):
        current = [f for f in scan(text) if not passes(f, allowed)]
        if not current:
            break
        text = _replace(text, current, allowed)
    return text


def describe(finding: Finding) -> str:
    """One sentence naming the finding's family and rule, never the text it matched."""
    _, what = _RULE_TABLE.get(finding.rule, (finding.family, "matched a scanner rule"))
    family = _FAMILY_WORDS.get(finding.family, "Finding")
    return f"{family}: {what} (rule {finding.rule})."


def find_folded(pattern: re.Pattern[str], text: str) -> Iterator[tuple[re.Match[str], int, int]]:
    """Each match of `pattern` in `text` as the scanner reads it: folded as for every rule
    (NFKC, look-alikes, invisible characters dropped, tag characters decoded).

    Args:
        pattern: matched against the folded text; it must not match an empty string.
        text: any string.

    Returns:
        Each match (on the folded text) with the span of `text` it came from.
    """
    t = _fold(text)
    for m in pattern.finditer(t.norm):
        if m.end() > m.start():
            yield (m, *t.span(m.start(), m.end()))


def secret_rule(text: str) -> str | None:
    """The rule of the first secret in `text` (an identifier Cairn would record: an agent's
    name, a folder's path), or None."""
    return next((f.rule for f in scan(text) if f.family is Family.SECRET), None)


# The public API, and the internals the scanner's own tests look inside.
__all__ = [
    "MAX_RULE_CHARS",
    "MAX_SCAN_CHARS",
    "RULES",
    "RULE_NAME",
    "SAFE_RANGES",
    "WINDOW_OVERLAP_CHARS",
    "_GATES",
    "_PATTERNS",
    "_SEARCHED",
    "Family",
    "Finding",
    "Hit",
    "_WordGates",
    "_fold",
    "_fold_char",
    "_hits",
    "describe",
    "find_folded",
    "passes",
    "redact",
    "scan",
    "secret_rule",
]
