"""What the tokenizer gives for text in every language, against a frozen copy of tokenizer 6
(tests/tokenizer_tok6.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.tokenizer import analyze, index_text, named
from tests import tokenizer_tok6 as tok6

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
