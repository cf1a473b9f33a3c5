"""Typo and abbreviation tolerance: alternatives from the index's own vocabulary for query words
the index has never seen ("browsr" -> browser, "proj" -> project).

Only words with no match at all are corrected, and only to terms that share their first two
letters: a deletion, insertion, substitution or swap of letters (one for short words, two for
longer ones, also after dropping an inflection ending), or a completion of an abbreviation that
is a prefix of indexed terms. Nothing here knows any particular vocabulary.
"""

from __future__ import annotations

import sqlite3

_ENDINGS = ("ing", "ed", "es", "s", "e")
MAX_ALTERNATIVES = 2
MAX_COMPLETIONS = 3


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
    return forms


def alternatives(conn: sqlite3.Connection, word: str) -> list[str]:
    """Indexed terms the unknown query `word` most likely meant, best first (maybe none)."""
    if len(word) < 3 or not (word.isascii() and word.isalpha()):
        return []
    prefix = word[:2]
    upper = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    rows = conn.execute(
        "SELECT term, docs FROM term_docs WHERE term >= ? AND term < ?", (prefix, upper)
    ).fetchall()
    limit = 1 if len(word) <= 4 else 2
    scored: list[tuple[int, int, str]] = []
    completions: list[tuple[int, str]] = []
    for term, docs in rows:
        if not term.isalpha() or term == word:
            continue
        if term.startswith(word) and len(term) <= len(word) + 9:
            completions.append((int(docs), term))
            continue
        best = min(distance(form, term, limit) for form in _stems(word))
        if best <= limit:
            scored.append((best, -int(docs), term))
    if scored:
        scored.sort()
        closest = scored[0][0]
        return [t for d, _, t in scored if d == closest][:MAX_ALTERNATIVES]
    completions.sort(reverse=True)
    return [t for _, t in completions[:MAX_COMPLETIONS]]
