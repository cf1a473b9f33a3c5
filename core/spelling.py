"""Typo and abbreviation tolerance: alternatives from the index's own vocabulary for query words
the index has never seen ("browsr" -> browser, "proj" -> project).

Only words with no match at all are corrected, and only to terms that start with the same two
letters (or with those two swapped: "ocmmit" -> commit). One edit - a deletion, insertion,
substitution or swap of letters - is a typo at any length. Two edits are one only for long words
(eight letters or more) or when the word is the term with letters left out ("timestp" ->
timestamp): two edits anywhere in a short word turned correct words the store lacks into other
words ("comment" -> commit, "model" -> mobile). Each is tried also after dropping an inflection
ending, and with a final y/i swapped (the stemmer writes "depoly" as "depoli"). When no term is
that close, an abbreviation is completed to the indexed terms it begins. Nothing here knows any
particular vocabulary.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable

# Part of the engine configuration's digest: a change of these rules changes search results.
SPELLING_VERSION = "cairn-spell-2"
_ENDINGS = ("ing", "ed", "es", "s", "e")
LONG_WORD = 8  # letters from which two edits anywhere still make a typo
MAX_ALTERNATIVES = 2
MAX_COMPLETIONS = 3
# With `keep` (the terms a caller's own memories hold), at most this many candidate terms are
# checked: a store of other vocabularies may hold many words near a typo.
MAX_CHECKED = 32


def distance(a: str, b: str, limit: int) -> int:
    """Optimal string alignment distance (Damerau-Levenshtein without re-edits), or limit + 1
    as soon as it is certain to exceed `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if min(current) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[-1]


def _stems(word: str) -> list[str]:
    forms = [word]
    forms.extend(
        word[: -len(ending)]
        for ending in _ENDINGS
        if word.endswith(ending) and len(word) - len(ending) >= 3
    )
    if len(word) >= 4 and word[-1] in "iy":
        forms.append(word[:-1] + ("y" if word[-1] == "i" else "i"))
    return forms


def _letters_left_out(word: str, term: str) -> bool:
    """Whether `word` is `term` with some of its letters left out (in order)."""
    letters = iter(term)
    return all(ch in letters for ch in word)


def _edits(form: str, term: str, limit: int) -> int:
    """Edits from a form of a query word to an indexed term, as a typo: two edits count only
    in a long word or as letters left out (more than `limit` means: not this term)."""
    found = distance(form, term, limit)
    if found == 2 and len(form) < LONG_WORD and not _letters_left_out(form, term):
        return limit + 1
    return found


def _terms_from(conn: sqlite3.Connection, prefix: str) -> list[tuple[str, int]]:
    """Indexed terms (and their document counts) that begin with `prefix`."""
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return [
        (term, int(docs))
        for term, docs in conn.execute(
            "SELECT term, docs FROM term_docs WHERE term >= ? AND term < ?", (prefix, upper)
        )
        if term.isalpha()
    ]


def alternatives(
    conn: sqlite3.Connection, word: str, keep: Callable[[str], bool] | None = None
) -> list[str]:
    """Indexed terms the unknown query `word` most likely meant, best first (maybe none).

    The index's vocabulary is every workspace's. With `keep`, only terms it accepts count (the
    closest of those, or failing any, the completions it accepts), as if the vocabulary were
    what `keep` admits: another workspace's words cannot take the places of the caller's."""
    if len(word) < 3 or not (word.isascii() and word.isalpha()):
        return []
    limit = 1 if len(word) <= 4 else 2
    forms = _stems(word)
    scored: list[tuple[int, int, str]] = []
    completions: list[tuple[int, str]] = []
    for term, docs in _terms_from(conn, word[:2]):
        if term == word:
            continue
        if term.startswith(word) and len(term) <= len(word) + 9:
            completions.append((docs, term))
            continue
        best = min(_edits(form, term, limit) for form in forms)
        if best <= limit:
            scored.append((best, -docs, term))
    if len(word) >= 4 and word[0] != word[1]:
        # The first two letters swapped ("ocmmit"): that swap is the one edit a short word may
        # have; a long word may have one more. A bare prefix search here would also take a
        # missing first letter for a typo ("apart" -> part).
        swapped = [form[1] + form[0] + form[2:] for form in forms]
        more = 1 if len(word) >= LONG_WORD else 0
        for term, docs in _terms_from(conn, word[1] + word[0]):
            best = 1 + min(distance(form, term, more) for form in swapped)
            if best <= 1 + more:
                scored.append((best, -docs, term))
    scored.sort()
    completions.sort(reverse=True)
    if keep is None:
        if scored:
            closest = scored[0][0]
            return [t for d, _, t in scored if d == closest][:MAX_ALTERNATIVES]
        return [t for _, t in completions[:MAX_COMPLETIONS]]
    left = MAX_CHECKED

    def accept(term: str) -> bool:
        nonlocal left
        left -= 1
        return left >= 0 and keep(term)

    return _kept(((d, t) for d, _, t in scored), MAX_ALTERNATIVES, accept) or _kept(
        ((0, t) for _, t in completions), MAX_COMPLETIONS, accept
    )


def _kept(
    ranked: Iterable[tuple[int, str]], count: int, accept: Callable[[str], bool]
) -> list[str]:
    """Up to `count` terms `accept` takes, all at the distance of the first one taken, in the
    order given."""
    out: list[str] = []
    closest: int | None = None
    for found, term in ranked:
        if len(out) == count or (closest is not None and found > closest):
            break
        if accept(term):
            closest = found
            out.append(term)
    return out
