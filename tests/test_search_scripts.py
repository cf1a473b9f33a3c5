"""Search in the scripts tokenizer 7 reads differently: Thai, Lao, Khmer and Myanmar (written
without spaces between words) and the Indic scripts (vowel signs that are combining marks) - and
every other language's terms exactly as tokenizer 6 gave them."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import search_index
from core.app import Cairn
from core.model import Caller, Scope
from core.paths import Paths
from core.requests import WriteRequest
from core.search import Presence, SearchRequest, SearchResult
from core.settings import Settings
from core.tokenizer import TOKENIZER_VERSION, TermKind, analyze, index_text, named
from core.writer import WriteTx
from tests import tokenizer_tok6 as tok6
from tests.conftest import FakeClock


def put(cairn: Cairn, caller: Caller, content: str) -> str:
    result = cairn.memories.write(
        caller, WriteRequest(content=content, kind="fact", scope=Scope.PROJECT)
    )
    assert result.id is not None, result
    return result.id


def search(cairn: Cairn, caller: Caller, query: str) -> SearchResult:
    return cairn.search.search(caller, SearchRequest(query=query))


def found(cairn: Cairn, caller: Caller, query: str) -> list[str]:
    return [h.memory.id for h in search(cairn, caller, query).hits]


# -- every other language: the terms of tokenizer 6 ------------------------------------------

SAMPLE = [
    "The configured databases were migrated; she went home at 10:30.",
    "APIs, PRs and URLs: iOS DevOps k8s utf8 x86_64 snake_case CamelCaseName getHTTPResponse",
    "see src/app.py:42, v1.2.3, http://10.0.0.12:8080/health?x=1&y=2, db.internal:5432",
    "postgres://app@db:5432/main ~/notes/todo.md #tag @user c++ C# f(x,y)=z 1,000,000 2,5",
    "John's didn't she'll I'd shell id ＡＰＩ　３０８０ café naïve Ångström Æsir straße",
    "记忆系统的用户喜欢简洁的中文回答。我家有一只猫，数据库很慢。",
    "うちの猫は黒い。東京タワーに行きました。ｶﾀｶﾅ",
    "차 색깔은 빨간색입니다. 한국어 검색이 잘 됩니다.",
    "مَرْحَبًا بِالْعَالَمِ، هذه ذاكرة طويلة الأمد",
    "می‌خواهم فارسی بنویسم",
    "שָׁלוֹם עוֹלָם, זה זיכרון לטווח ארוך",
    "Привет, мир! Ёлка и ещё раз: база данных работает.",
    "Γειά σου Κόσμε· η μνήμη είναι ΜΕΓΑΛΗ και ΣΟΦΗ.",
    "Tiếng Việt có dấu: người dùng thích câu trả lời ngắn.",
    "emoji 👍🏽 1️⃣ ❤️‍🔥 and e\u0301 combining, Z\u0335A\u0336L\u0337G\u0338O",
]


def tok6_terms(text: str) -> list[tuple[str, str]]:
    return [(t.text, t.kind.value) for t in tok6.analyze(text)]


def tok7_terms(text: str) -> list[tuple[str, str]]:
    return [(t.text, t.kind.value) for t in analyze(text)]


@pytest.mark.parametrize("text", SAMPLE)
def test_every_other_language_keeps_its_terms(text: str) -> None:
    assert tok7_terms(text) == tok6_terms(text)
    assert index_text(text) == tok6.index_text(text)
    assert named(text) == tok6.named(text)


# The blocks whose reading changed (a joiner changes only between two of their letters).
CHANGED = re.compile(
    "[\u0900-\u0dff\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff"
    "\u1cd0-\u1cff\ua8e0-\ua8ff\ua9e0-\ua9ff\uaa60-\uaa7f]"
)


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        st.characters(exclude_categories=["Cs"]).filter(lambda c: not CHANGED.match(c)),
        max_size=40,
    )
)
def test_any_text_outside_those_scripts_keeps_its_terms(text: str) -> None:
    assert tok7_terms(text) == tok6_terms(text)
    assert index_text(text) == tok6.index_text(text)


def test_the_tokenizer_version_is_seven() -> None:
    assert TOKENIZER_VERSION == "cairn-tok-7"


# -- Thai, Lao, Khmer, Myanmar: words inside a run --------------------------------------------

# (the word, a sentence that holds it, two sentences that do not, a word no sentence holds)
SPACELESS = {
    "thai": (
        "ไพธอน",
        "ไพธอนเป็นภาษาโปรแกรมที่นิยมมาก",
        ["ภาษาไทยมีวรรณยุกต์ห้าเสียง", "วันนี้อากาศร้อนมากและฝนตกหนัก"],
        "รถไฟฟ้า",
    ),
    "lao": (
        "ວຽງຈັນ",
        "ຂ້ອຍອາໄສຢູ່ວຽງຈັນກັບຄອບຄົວ",
        ["ພາສາລາວເປັນພາສາທາງການ", "ມື້ນີ້ອາກາດຮ້ອນຫຼາຍ"],
        "ຫຼວງພະບາງ",
    ),
    "khmer": (
        "ភ្នំពេញ",
        "ខ្ញុំរស់នៅភ្នំពេញជាមួយគ្រួសារ",
        ["ភាសាខ្មែរជាភាសាផ្លូវការ", "ថ្ងៃនេះក្តៅណាស់"],
        "សៀមរាប",
    ),
    "burmese": (
        "ရန်ကုန်",
        "ကျွန်တော်ရန်ကုန်မှာနေတယ်",
        ["မြန်မာစာကိုလေ့လာနေတယ်", "ဒီနေ့ရာသီဥတုပူတယ်"],
        "မန္တလေး",
    ),
}


@pytest.mark.parametrize("script", sorted(SPACELESS))
def test_a_word_inside_a_sentence_is_found_first(cairn: Cairn, agent: Caller, script: str) -> None:
    word, sentence, others, absent = SPACELESS[script]
    for other in others:
        put(cairn, agent, other)
    mid = put(cairn, agent, sentence)
    for other in others:
        put(cairn, agent, other + " " + other)
    result = search(cairn, agent, word)
    assert result.hits[0].memory.id == mid
    assert result.presence is Presence.STRONG
    # a word no memory holds is not found in memories that share only its letters
    assert search(cairn, agent, absent).presence is Presence.NONE


def test_a_word_no_memory_holds_is_absent_beside_a_text_holding_its_letters(
    cairn: Cairn, agent: Caller
) -> None:
    """Clusters are letters: counted as a query's words (as Chinese characters are), Bangkok's
    letters in a long Thai paragraph made presence `weak` (coverage 0.52) for a city no memory
    names, and every Thai memory a hit. Only the cluster pairs look for a longer word."""
    put(
        cairn,
        agent,
        "ภาษาไทยเป็นภาษาราชการของประเทศไทย มีผู้พูดประมาณหกสิบล้านคน "
        "ใช้อักษรไทยในการเขียน ซึ่งมีพยัญชนะสี่สิบสี่ตัวและสระหลายรูป "
        "การประชุมทีมพัฒนาซอฟต์แวร์จะจัดขึ้นทุกวันจันทร์ที่ห้องประชุมใหญ่",
    )
    word, sentence, others, _ = SPACELESS["thai"]
    for other in others:
        put(cairn, agent, other)
    mid = put(cairn, agent, sentence)
    bangkok = search(cairn, agent, "กรุงเทพมหานคร")
    assert bangkok.presence is Presence.NONE
    assert all(h.coverage < 0.4 for h in bangkok.hits)
    hits = found(cairn, agent, word)  # the sentence, and one sharing the pair อน (ร้อน)
    assert hits[0] == mid and len(hits) == 2


def test_a_one_syllable_word_is_found_inside_a_run(cairn: Cairn, agent: Caller) -> None:
    """Burmese water (ရေ) is one cluster: it shares no cluster pair with the sentence that
    holds it, and the single clusters find it."""
    water = put(cairn, agent, "ကျွန်တော်ရေသောက်ချင်တယ်")
    put(cairn, agent, "မြန်မာစာကိုလေ့လာနေတယ်")
    assert found(cairn, agent, "ရေ") == [water]


def test_spaceless_runs_are_cluster_pairs_and_clusters() -> None:
    terms = analyze("ไพธอนเป็น 3.11")
    assert [t.text for t in terms if t.kind is TermKind.CLUSTER_PAIR] == [
        "ไพ",
        "พธ",
        "ธอ",
        "อน",
        "นเ",
        "เป็",
        "ป็น",
    ]
    # the clusters are indexed (a one-cluster word is found inside a run), never looked for
    assert [t.text for t in terms if t.kind is TermKind.CLUSTER_PART] == [
        "ไ",
        "พ",
        "ธ",
        "อ",
        "น",
        "เ",
        "ป็",
        "น",
    ]
    assert index_text("ไพธอนเป็น").split()[:8] == ["ไ", "พ", "ธ", "อ", "น", "เ", "ป็", "น"]
    assert ("3.11", "number") in tok7_terms("ไพธอนเป็น 3.11")
    # a zero-width space is a word break: no pair across it
    assert "นเ" not in index_text("ไพธอน\u200bเป็น").split()
    assert index_text("ปี๒๕๖๗").split() == ["ปี", "๒๕๖๗"]  # digits are a number, not clusters


# -- Indic scripts: vowel signs inside words ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("पायथन", ["पायथन"]),
        ("हिंदी", ["हिंदी"]),
        ("ক্ষমা", ["ক্ষমা"]),
        ("தமிழ்", ["தமிழ்"]),
        ("తెలుగు", ["తెలుగు"]),
        ("ಕನ್ನಡ", ["ಕನ್ನಡ"]),
        ("മലയാളം", ["മലയാളം"]),
        ("ગુજરાતી", ["ગુજરાતી"]),
        ("ਪੰਜਾਬੀ", ["ਪੰਜਾਬੀ"]),
        ("සිංහල", ["සිංහල"]),
        ("བོད་ཡིག", ["བོད", "ཡིག"]),
        ("हिंदी-भाषा", ["हिंदी-भाषा", "हिंदी", "भाषा"]),
        ("वाक्य।दूसरा", ["वाक्य", "दूसरा"]),
    ],
)
def test_an_indic_word_keeps_its_vowel_signs(text: str, terms: list[str]) -> None:
    assert index_text(text).split() == terms


def test_an_indic_word_is_found_and_not_by_another_with_its_consonants(
    cairn: Cairn, agent: Caller
) -> None:
    """काम (work) and कम (less), हिंदी (Hindi) and हिंद (India) differ only in their vowel signs."""
    work = put(cairn, agent, "आज बहुत काम है")
    less = put(cairn, agent, "पानी कम है")
    hindi = put(cairn, agent, "मुझे हिंदी पसंद है")
    ocean = put(cairn, agent, "हिंद महासागर बहुत बड़ा है")
    python = put(cairn, agent, "पायथन एक प्रोग्रामिंग भाषा है")
    assert found(cairn, agent, "काम") == [work]
    assert found(cairn, agent, "कम") == [less]
    assert found(cairn, agent, "हिंदी") == [hindi]
    assert found(cairn, agent, "हिंद महासागर")[0] == ocean
    assert found(cairn, agent, "पायथन") == [python]
    assert search(cairn, agent, "पायथन").presence is Presence.STRONG


def test_symbols_and_chinese_are_found_as_before_beside_the_new_scripts(
    cairn: Cairn, agent: Caller
) -> None:
    thai = put(cairn, agent, "ไพธอนเป็นภาษาโปรแกรม 127.0.0.1:3081")
    hindi = put(cairn, agent, "पायथन सर्वर db.internal:5432 पर है")
    server = put(cairn, agent, "The cache listens on 127.0.0.1:3080 in staging")
    memory = put(cairn, agent, "记忆系统的用户喜欢简洁的中文回答")
    top = search(cairn, agent, "cache 127.0.0.1:3080").hits[0]
    assert top.memory.id == server and top.pinned_by == ("127.0.0.1:3080", "127.0.0.1")
    top = search(cairn, agent, "db.internal:5432").hits[0]
    assert top.memory.id == hindi and top.pinned_by
    assert search(cairn, agent, "127.0.0.1:3081 ไพธอน").hits[0].memory.id == thai
    assert found(cairn, agent, "中文")[0] == memory
    assert found(cairn, agent, "记忆") == [memory]


# -- a store indexed by tokenizer 6 ------------------------------------------------------------


def index_as_tok6(tx: WriteTx) -> None:
    """Leave the store's index as tokenizer 6 built it: its table, its terms, its fingerprint."""
    conn = tx.conn
    conn.execute("DROP TABLE memory_fts_vocab")
    conn.execute("DROP TABLE memory_fts")
    conn.execute(tok6.CREATE_FTS)
    conn.execute(search_index.CREATE_VOCAB)
    for seq, content in conn.execute("SELECT seq, content FROM memory").fetchall():
        conn.execute(
            "INSERT INTO memory_fts (rowid, content, summary, tags, keywords) "
            "VALUES (?, ?, '', '', '')",
            (seq, tok6.index_text(content)),
        )
    search_index.recount(conn)
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'index_fingerprint'", (tok6.INDEX_FINGERPRINT,)
    )


def test_a_store_indexed_by_tokenizer_6_is_rebuilt_and_finds_a_thai_word(
    paths: Paths, clock: FakeClock
) -> None:
    app = Cairn.open(paths, settings=Settings.defaults(), clock=clock)
    human = Caller.human()
    mid = app.memories.write(
        human,
        WriteRequest(content="ไพธอนเป็นภาษาโปรแกรม", kind="fact", scope=Scope.GLOBAL),
    ).id
    app.memories.write(
        human, WriteRequest(content="วันนี้อากาศร้อนมาก", kind="fact", scope=Scope.GLOBAL)
    )
    app.store.writer.run(index_as_tok6)
    try:
        assert [h.memory.id for h in search(app, human, "ไพธอน").hits] == []
    finally:
        app.close()
    again = Cairn.open(paths, settings=Settings.defaults(), clock=clock)
    try:
        assert search_index.index_fingerprint() != tok6.INDEX_FINGERPRINT
        assert search(again, human, "ไพธอน").hits[0].memory.id == mid
    finally:
        again.close()


def test_clusters_are_a_base_and_its_marks() -> None:
    for text in ("เป็น", "မြန်", "ខ្មែរ", "ບໍ່"):
        units = [
            t.text for t in analyze(text) if t.kind in (TermKind.CLUSTER, TermKind.CLUSTER_PART)
        ]
        assert "".join(units) == unicodedata.normalize("NFKC", text)
        assert all(unicodedata.category(u[0])[0] != "M" for u in units)
        assert all(unicodedata.category(c)[0] == "M" for u in units for c in u[1:])
