"""The tokenizer as it was at cairn-tok-6 (core/tokenizer.py on 2026-11-30, frozen): what a
store indexed before tokenizer 7 holds, and what every text without Thai, Lao, Khmer, Myanmar or
an Indic script must still give (tests/test_search_scripts.py). Never change it."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

import snowballstemmer

TOKENIZER_VERSION = "cairn-tok-6"
# The index table those stores hold (core/search_index.py then), and the fingerprint they carry.
CREATE_FTS = (
    "CREATE VIRTUAL TABLE memory_fts USING fts5(content, summary, tags, keywords, "
    "tokenize = \"unicode61 remove_diacritics 0 tokenchars '._:/-@#+~'\")"
)
INDEX_FINGERPRINT = "cab9563d2de6fa23"

# Characters FTS5's unicode61 tokenizer must keep inside tokens, because our symbol terms use them.
TERM_CHARS = "._:/-@#+~"


class TermKind(StrEnum):
    WORD = "word"
    NUMBER = "number"
    SYMBOL = "symbol"  # a whole compound: identifier, path, version, IP, URL
    PART = "part"  # a piece of a symbol
    CJK_UNIGRAM = "cjk1"
    CJK_BIGRAM = "cjk2"


@dataclass(frozen=True)
class Term:
    text: str
    kind: TermKind

    @property
    def is_symbol(self) -> bool:
        """Exact-match material for pinning: whole symbols and numbers of two or more digits."""
        return len(self.text) >= 2 and (
            self.kind is TermKind.SYMBOL
            or (self.kind is TermKind.NUMBER and sum(c.isdigit() for c in self.text) >= 2)
        )


_CJK = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
_CHUNK = re.compile(rf"[{_CJK}]+|[^\s{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")
_EDGE = re.compile(r"^[^\w~/#@]+|[^\w+#]+$")
_SEPARATOR = re.compile(r"[._:/\\\-@#+~=?&,;'\"()\[\]{}<>|!*$%^`]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"^\w+$")
# An acronym in the plural (APIs, PRs, URLs): the acronym's word, not a CamelCase name
_ACRONYM_PLURAL = re.compile(r"^[A-Z]{2,}s$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")  # 1,000,000 is one number
# Punctuation that separates things inside a chunk ("1,2,3", "f(a,b)=c", "?q=x&y=z"): each side
# is a chunk of its own, never glued into one symbol ("123").
_BREAK = re.compile(r"[,;=?&()\[\]{}<>|!*$%^\"'`]+")
# What a person names on its own inside a whole symbol: an IPv4 address (in host:port or a URL),
# a host before its port, a file name at the end of a path, a version without its "v".
_IPV4 = re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])")
_HOST_PORT = re.compile(r"^((?=[\w.-]*[^\W\d_])[\w.-]+):\d{1,5}$")  # a letter: 10:30 is a time
_FILE_NAME = re.compile(r"/([\w.+-]+\.\w+)$")
_V_VERSION = re.compile(r"^v(\d+(?:\.\d+)+)$")
# The port after a host name or an IPv4 address: the index holds it as a piece, but a person
# names it on its own (`5432` of 10.0.0.12:5432), so it pins (`named`).
# Also inside a URL (`postgres://app@db:5432/main`); a line number after a file name
# (`app.py:42`) reads the same, and pins too.
_PORT_AFTER_HOST = re.compile(
    r"(?:^|[/@])(?:(?=[\w.-]*[^\W\d_])[\w.-]+|\d{1,3}(?:\.\d{1,3}){3}):(\d{2,5})(?=/|$)"
)
_KEEP = re.compile(rf"[^\w{re.escape(TERM_CHARS)}]+")

ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves s t d ll m re ve also just like get got
    well""".split()
)
# Single characters that carry grammar, not meaning, in Chinese text (bigrams keep them in context).
CJK_STOP_UNIGRAMS: frozenset[str] = frozenset("的了是在和也就都而及与或着吗呢吧啊么之其这那个")

_stemmer = snowballstemmer.stemmer("english")

# Irregular English forms a suffix stemmer cannot join to their base ("went" ~ "go"): the base
# form each maps to before stemming. General English, nothing from any particular data set.
_IRREGULAR_TEXT = """
arise arose arisen|awake awoke awoken|be was were been being am is are|bear borne|
beat beaten|become became|begin began begun|bend bent|bet|bid|bite bit bitten|
bleed bled|blow blew blown|break broke broken|breed bred|bring brought|build built|burn burnt|
buy bought|catch caught|choose chose chosen|cling clung|come came|cost|creep crept|cut|
deal dealt|dig dug|do did done does doing|draw drew drawn|dream dreamt|drink drank drunk|
drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|
find found|flee fled|fly flew flown flies|forbid forbade forbidden|forget forgot forgotten|
forgive forgave forgiven|freeze froze frozen|get got gotten|give gave given|go went gone goes|
grow grew grown|hang hung|have had has having|hear heard|hide hid hidden|
hit|hold held|hurt|keep kept|kneel knelt|know knew known|lead led|lean leant|
leap leapt|learn learnt|leave|lend lent|let|lose lost|
make made|mean meant|meet met|pay paid|prove proven|put|quit|read|ride rode ridden|
ring rang rung|rise risen|run ran|say said|see saw seen|seek sought|sell sold|
send sent|set|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|
shut|sing sang sung|sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|
speed sped|spend spent|spin spun|spit spat|split|spread|spring sprang sprung|stand stood|
steal stole stolen|stick stuck|sting stung|stink stank stunk|strike struck|swear swore sworn|
sweep swept|swim swam swum|swing swung|take took taken|teach taught|tear tore torn|
tell told|think thought|throw threw thrown|understand understood|wake woke woken|
wear wore worn|weep wept|win won|write wrote written|
child children|person people|man men|woman women|mouse mice|foot feet|tooth teeth|
goose geese|ox oxen|die died dying|lie lying|tie tying
"""
IRREGULAR: dict[str, str] = {
    form: group.split()[0]
    for group in _IRREGULAR_TEXT.replace("\n", " ").split("|")
    if group.strip()
    for form in group.split()[1:]
}


@functools.lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of a lower-case word, after mapping irregular forms (cached)."""
    if not word.isascii() or not word.isalpha():
        return word
    result: str = _stemmer.stemWord(IRREGULAR.get(word, word))
    return result


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


@functools.lru_cache(maxsize=50_000)
def _cjk_run_terms(run: str) -> tuple[Term, ...]:
    return tuple(_cjk_terms(run.casefold()))


def _cjk_terms(run: str) -> list[Term]:
    terms = [Term(ch, TermKind.CJK_UNIGRAM) for ch in run]
    terms.extend(Term(run[i : i + 2], TermKind.CJK_BIGRAM) for i in range(len(run) - 1))
    return terms


def _word_terms(piece: str) -> list[Term]:
    """A run of word characters (no separators left) as word or number terms."""
    out: list[Term] = []
    for part in _CAMEL.split(piece):
        low = part.casefold()
        if not low:
            continue
        if low.isdigit():
            out.append(Term(low, TermKind.NUMBER))
        else:
            out.append(Term(stem(low), TermKind.WORD))
    return out


def _strip_marks(text: str) -> str:
    """Drop combining marks from Latin-script text (café -> cafe); CJK never reaches here."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize(
        "NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    )


_POSSESSIVE = re.compile(r"'s$", re.IGNORECASE)
_APOSTROPHES = re.compile(r"(?<=\w)'(?=\w)")


@functools.lru_cache(maxsize=100_000)
def _chunk_terms(chunk: str) -> tuple[Term, ...]:
    """The terms of one whitespace-free chunk (cached: the same words recur in every text)."""
    return tuple(_chunk_terms_uncached(chunk))


def _chunk_terms_uncached(chunk: str) -> list[Term]:
    chunk = _strip_marks(chunk).replace("\\", "/").replace("’", "'")
    if _EDGE.sub("", chunk).casefold() in _CONTRACTIONS:
        chunk = ""  # "she'll" is a stopword; joined into "shell" it would hide that word
    # "John's" is John; "didn't" is one word (a stopword), not a symbol with a separator.
    chunk = _APOSTROPHES.sub("", _POSSESSIVE.sub("", _EDGE.sub("", chunk)))
    chunk = _EDGE.sub("", chunk)
    if not chunk:
        return []
    if _THOUSANDS.match(chunk) or _NUMBER.match(chunk):
        return [Term(chunk.replace(",", ""), TermKind.NUMBER)]
    if _BREAK.search(chunk):
        return [t for piece in _BREAK.split(chunk) for t in _chunk_terms_uncached(piece)]
    if _ACRONYM_PLURAL.match(chunk):
        chunk = chunk[:-1]  # "APIs" is "API" ("ap" + "is" matched nothing); a word below
    compound = bool(_SEPARATOR.search(chunk)) or bool(_CAMEL.search(chunk))
    if not compound and _WORD.match(chunk):
        if chunk.isalpha() or chunk.isdigit():
            return _word_terms(chunk)
        # letters and digits mixed (k8s, utf8, x86): an exact symbol, and its runs
        parts = re.findall(r"[^\W\d_]+|\d+", chunk)
        return [Term(chunk.casefold(), TermKind.SYMBOL)] + [
            Term(p.casefold(), TermKind.PART) for p in parts if len(parts) > 1
        ]
    whole = _KEEP.sub("", chunk.casefold()).strip("._:/-@~")
    out: list[Term] = []
    if len(whole) >= 2:
        out.append(Term(whole, TermKind.SYMBOL))
        out.extend(Term(inner, TermKind.SYMBOL) for inner in _inner_symbols(whole))
        if chunk.isalpha() and stem(whole) != whole:
            # `iOS` typed `ios` is a word, stemmed `io`: the name carries that form too, so
            # either spelling finds the other (tokenizer 6)
            out.append(Term(stem(whole), TermKind.PART))
    for piece in _SEPARATOR.split(chunk):
        # Pieces never pin on their own: "01" inside SCOPED_ALPHA_01 is not an identifier.
        out.extend(Term(term.text, TermKind.PART) for term in (_word_terms(piece) if piece else []))
    return out


def _inner_symbols(whole: str) -> list[str]:
    """Symbols inside a whole one that a person would write on their own (`10.0.0.12` in
    `10.0.0.12:5432`, `app.py` in `src/app.py`, `1.2.3` in `v1.2.3`), so either pins the other."""
    found = _IPV4.findall(whole)
    for pattern in (_HOST_PORT, _FILE_NAME, _V_VERSION):
        match = pattern.search(whole)
        if match:
            found.append(match.group(1))
    return [s for s in dict.fromkeys(found) if s != whole and len(s) >= 2]


def analyze(text: str) -> list[Term]:
    """Every term of `text`, in order, duplicates kept (term frequency matters to ranking)."""
    terms: list[Term] = []
    for match in _CHUNK.finditer(normalize(text)):
        chunk = match.group()
        if _IS_CJK.match(chunk):
            terms.extend(_cjk_run_terms(chunk))
        else:
            terms.extend(_chunk_terms(chunk))
    return terms


def named(text: str) -> set[str]:
    """The terms `text` names on its own - what a query symbol must match to pin: its words and
    whole symbols, and a port after its host, but not the other pieces of a symbol (`01` in
    SCOPED_ALPHA_01, `12` in 10.0.0.12:5432, `v1` in v1.2.3)."""
    out: set[str] = set()
    for term in analyze(text):
        if term.kind is TermKind.PART:
            continue
        out.add(term.text)
        if term.kind is TermKind.SYMBOL:
            out.update(port.group(1) for port in _PORT_AFTER_HOST.finditer(term.text))
    return out


def is_stop(term: Term) -> bool:
    if term.kind is TermKind.WORD:
        return term.text in _STEMMED_STOPWORDS
    if term.kind is TermKind.CJK_UNIGRAM:
        return term.text in CJK_STOP_UNIGRAMS
    return False


def index_text(text: str | None) -> str:
    """The space-separated terms stored in the full-text index for one field (stopwords out)."""
    if not text:
        return ""
    return " ".join(filter(None, map(_chunk_index_text, _CHUNK.findall(normalize(text)))))


@functools.lru_cache(maxsize=20_000)
def _chunk_index_text(chunk: str) -> str:
    """`index_text` of one chunk as `analyze` splits text (cached: most chunks were seen before).

    The terms are computed without `_chunk_terms`' cache: each chunk gets here once, so keeping
    its terms there as well would only hold memory (and slow the garbage collector)."""
    if _IS_CJK.match(chunk):
        terms: Iterable[Term] = _cjk_terms(chunk.casefold())
    else:
        terms = _chunk_terms_uncached(chunk)
    return " ".join([t.text for t in terms if not is_stop(t)])


# Contractions are stopwords as written, apostrophe and all (`_chunk_terms_uncached`); without
# it they are words of their own ("shell", "id", "ill", "hell", "shed", "wed"), searched like
# any other (until tokenizer 4 they were stopwords too, and "which shell" found nothing). "well"
# stays one: in conversation it is mostly "Well, ...".
_CONTRACTIONS: frozenset[str] = frozenset(w for w in ENGLISH_STOPWORDS if "'" in w)
_STEMMED_STOPWORDS: frozenset[str] = frozenset(
    {stem(w) for w in ENGLISH_STOPWORDS if "'" not in w}
    | {w for w in ENGLISH_STOPWORDS if "'" not in w}
)
