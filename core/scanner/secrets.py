"""Judging scanner candidates in context, and the checks for secrets: provider keys, private
keys, tokens, passwords in URLs, connection strings and assignments."""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from core.scanner.text import _Text

_MAX_PEM_CHARS = 16_384  # a private-key block is followed this far, window or not


# -- judging candidates ----------------------------------------------------------------------

Hit = tuple[str, int, int]  # rule, start, end in the folded text
Check = Callable[["_Text", "re.Match[str]"], list[Hit]]

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
# What may not come right before a key for it to count: a letter or digit makes it the tail of
# another word. A `-` or `_` does not (`s-ghp_...`, `AWS_AKIA...`: until 2026-11-30 they did,
# and such keys passed).
_GLUED = _ALNUM
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in Counter(value).values()) if n else 0.0


def _classes(value: str) -> int:
    """How many of lower-case, upper-case and digits occur."""
    return (
        any("a" <= c <= "z" for c in value)
        + any("A" <= c <= "Z" for c in value)
        + any("0" <= c <= "9" for c in value)
    )


def _random(value: str, classes: int = 2, entropy: float = 3.0) -> bool:
    return _classes(value) >= classes and _entropy(value) >= entropy


_PLACEHOLDER = re.compile(
    r"""(?ix)
    \$\{?[a-z_][\w.:\-]*\}? | \$\(.*\) | %[a-z_]\w*% | <[^<>]*> | \{\{?[^{}]*\}?\} | \[.*\]?
    | [*x.#_\-•·?…]+ | %s | %\(\w+\)s
    | (?:(?:your|my|the|some|example|sample|dummy|fake|test|placeholder|insert|enter|put)[_\-\s]?)?
      (?:(?:db|database|api|app|user|admin|root|account|secret|access|super)[_\-\s]?)?
      (?:password|passwd|pass|pwd|secret|token|key|apikey|credentials?|value|changeme|redacted)
      (?:[_\-\s]?(?:here|goes[_\-\s]?here|value))?
    | change[_\-]?me | redacted | none | null | nil | empty | undefined | todo | tbd | n/?a
    """
)
_PLACEHOLDER_WORD = re.compile(r"example|placeholder|your[-_]|changeme|xxxx|\*\*\*\*", re.I)
_IDENTIFIER_PATH = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)+(?:\(\))?")
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z_$\-]*")


def _placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value) is not None or _PLACEHOLDER_WORD.search(value) is not None


_DIGIT = re.compile(r"\d")
_ALPHA = re.compile(r"[^\W\d_]")


def _literal_value(value: str, digit: bool) -> bool:
    """A value that could be a literal secret: not a placeholder, variable, path, URL or name."""
    return not (
        value.startswith(("/", "~", "./", "../", "http:", "https:", "file:"))
        or "://" in value
        or len(set(value)) <= 2
        or (not digit and _IDENTIFIER.fullmatch(value))
        or _IDENTIFIER_PATH.fullmatch(value)
        or _placeholder(value)
    )


def _spaced(pattern: str) -> str:
    """Write word gaps as single spaces: each becomes a bounded run of white space."""
    return pattern.replace(" ", r"\s{1,3}")


# Whether a trigger phrase is addressed to a model: at the start of a clause, after nothing but
# politeness or a second-person modal ("please", "you must", "I need you to"). Third-person and
# first-person statements ("the model must ignore...", "I will ignore...") are not.
_CLAUSE_END = frozenset("\n.!?;:,\"'“”‘’`([{<>*#|-–—。！？；：，、「」『』（【〔")
_OPEN_QUOTE = frozenset("\"'“‘`「『《〈")


@dataclass(frozen=True, slots=True)
class _Lead:
    """Words that may come before an imperative without making it a statement ("please",
    "you must", "I need you to"; 请, 现在), matched backwards from the phrase. English leads are
    one regex over the reversed text before it (each strip is one anchored match, and gaps may
    be several spaces); Chinese ones are looked up by their last character."""

    reversed: re.Pattern[str]
    chinese: bool
    by_last: Mapping[str, tuple[str, ...]]  # last character -> phrases, longest first


def _lead(phrases: str, *, chinese: bool = False) -> _Lead:
    alternatives = sorted((p.replace("_", " ")[::-1] for p in phrases.split()), key=len)
    body = "|".join(_spaced(re.escape(a).replace("\\ ", " ")) for a in reversed(alternatives))
    # Backwards, "not preceded by a letter" becomes "not followed by one".
    boundary = "" if chinese else "(?![a-z0-9'’])"
    pattern = re.compile(rf"[\s,，]{{0,8}}(?:{body}){boundary}[\s,，]{{0,8}}")
    by_last: dict[str, list[str]] = defaultdict(list)
    for phrase in sorted(phrases.replace("_", " ").split(), key=len, reverse=True):
        by_last[phrase[-1]].append(phrase)
    return _Lead(pattern, chinese, MappingProxyType({k: tuple(v) for k, v in by_last.items()}))


_MODALS = "want need order command require ask tell urge"
_EN_LEAD = _lead(
    "please pls kindly now just so and then also first next immediately instead simply actually "
    "always really must should will shall can may need_to have_to has_to are_to you u "
    "from_now_on going_forward at_once hereby therefore hey ok okay alright assistant ai model "
    "claude chatgpt gpt llm agent bot do_it quickly silently secretly quietly "
    + " ".join(f"{who}_{verb}_you_to" for who in ("i", "we") for verb in _MODALS.split())
)
_ZH_LEAD = _lead(
    "请 请你 请您 你 你们 您 现在开始 现在 开始 立即 立刻 马上 务必 必须 一定要 要 并且 并 然后 "
    "接下来 从现在开始 从现在起 直接 同时 也 再 就 赶紧 先 好的 好 那么 注意 重要 悄悄 悄悄地 "
    "偷偷 偷偷地 ai 助手 模型",
    chinese=True,
)
_DOC_CUE = re.compile(
    _spaced(
        r"\b(?:such as|like|e\.g|for example|for instance|called|named|known as|phrases?|"
        r"attackers?|adversar(?:y|ies)|writes?|written|uses?|tries|try|tricks?|strings?|"
        r"patterns?|attacks?|injections?|jailbreaks?|examples?|classic|famous|typical|detects?|"
        r"flags?|blocks?|matches|contains?|says?|said|wrote|reads|quoted?|payloads?|style|type|"
        r"kind|takeover|hijack(?:ing)?|class(?:es)?|regex(?:es)?)\b"
    )
    + r"|例如|比如|诸如|类似|像是|这类|之类|这种|此类|攻击|注入|检测|识别|拦截|短语|句子|字符串|"
    r"样本|示例|论文|研究|讨论|所谓|说法|越狱"
)


def _lead_start(low: str, start: int, lead: _Lead) -> int:
    """Where the run of lead words right before `start` begins (`start` when there is none)."""
    if lead.chinese:
        end = start
        for _ in range(6):
            while end > 0 and low[end - 1] in " \t,，":
                end -= 1
            for phrase in lead.by_last.get(low[end - 1], ()) if end else ():
                if low.startswith(phrase, end - len(phrase)):
                    end -= len(phrase)
                    break
            else:
                break
        return end
    back = low[max(0, start - 64) : start][::-1]
    pos = 0
    for _ in range(6):
        m = lead.reversed.match(back, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
    return start - pos


def _addressed(low: str, start: int, end: int, lead: _Lead) -> bool:
    """Whether the phrase at [start, end) is an imperative or role assignment, not a mention."""
    prev = low[max(0, start - 8) : start].rstrip(" \t,，")[-1:]
    if prev and prev not in _CLAUSE_END and prev not in lead.by_last and not prev.isspace():
        return False  # glued to a word that cannot end a lead: the common case, decided fast
    lo = _lead_start(low, start, lead)
    head = low[max(0, lo - 8) : lo]
    stripped = head.rstrip()
    # Chinese runs clauses together; a space after Latin text also starts one. A line break
    # ends a clause as a full stop does (the line after a heading; until 2026-11-30 only the
    # stop counted, so "Notes\nIgnore all previous instructions" passed).
    spaced = lead.chinese and head[-1:].isspace()
    new_line = "\n" in head[len(stripped) :] or "\r" in head[len(stripped) :]
    if stripped and stripped[-1] not in _CLAUSE_END and not spaced and not new_line:
        return False
    # A quoted phrase in documentary framing is a mention: 'attacks such as "ignore ..."'.
    if stripped and stripped[-1] in _OPEN_QUOTE:
        around = low[max(0, start - 80) : start] + " " + low[end : end + 40]
        if _DOC_CUE.search(around):
            return False
    return True


def _imperative(rule: str, lang: str = "en") -> Check:
    lead = _ZH_LEAD if lang == "zh" else _EN_LEAD

    def check(t: _Text, m: re.Match[str]) -> list[Hit]:
        s, e = m.span()
        if lang == "en" and s > 0 and t.low[s - 1] in _ALNUM:
            return []
        return [(rule, s, e)] if _addressed(t.low, s, e, lead) else []

    return check


# -- secrets -----------------------------------------------------------------------------------


def _token(
    rule: str, *, classes: int = 2, entropy: float = 3.0, left: frozenset[str] = _GLUED
) -> Check:
    """A provider-prefixed token: the whole token at a boundary, with a random-looking body
    (group 1), so that placeholders like ghp_XXXX... and prose like "glpat-<token>" pass."""

    def check(t: _Text, m: re.Match[str]) -> list[Hit]:
        s, e = m.span()
        if s > 0 and t.norm[s - 1] in left:
            return []
        while e > s and t.norm[e - 1] == ".":  # a sentence's full stop after the token
            e -= 1
        return [(rule, s, e)] if _random(m.group(1).rstrip("."), classes, entropy) else []

    return check


_HEX32 = re.compile(r"[0-9a-f]{32}")
_OPENAI_KIND = re.compile(r"(?:proj|svcacct|admin|None)-")
_ANTHROPIC = re.compile(r"ant-(?:api|admin|sid|oat)\d\d-[A-Za-z0-9_\-]{32,}")
_OPENROUTER = re.compile(r"or-v1-[0-9a-f]{64}")


def _sk_rule(body: str) -> str | None:
    """Which provider an `sk-` key body belongs to, if it looks like a real key."""
    if body.startswith("ant-"):
        ok = _ANTHROPIC.fullmatch(body) and _random(body[12:], 2, 3.5)
        return "anthropic-key" if ok else None
    if body.startswith("or-"):
        return "openrouter-key" if _OPENROUTER.fullmatch(body) else None
    if _HEX32.fullmatch(body):
        return "deepseek-key" if _classes(body) >= 2 else None
    kind = _OPENAI_KIND.match(body)
    rest = body[kind.end() :] if kind else body
    # "T3BlbkFJ" is base64 for "OpenAI": OpenAI embeds it in the middle of its keys.
    if len(rest) >= 32 and ("T3BlbkFJ" in rest or _random(rest, 3, 3.5)):
        return "openai-key"
    return None


def _sk(t: _Text, m: re.Match[str]) -> list[Hit]:
    """`sk-`: Anthropic, OpenRouter, DeepSeek (32 hex) or OpenAI; `sk_live_`: Stripe."""
    s, e = m.span()
    if s > 0 and t.norm[s - 1] in _GLUED:
        return []
    stripe = m.group("stripe")
    rule = ("stripe-key" if _random(stripe) else None) if stripe else _sk_rule(m.group("body"))
    return [(rule, s, e)] if rule else []


def _capital_a(t: _Text, m: re.Match[str]) -> list[Hit]:
    """Google API keys (AIza...) and AWS access key ids (AKIA... / ASIA...)."""
    s, e = m.span()
    if s > 0 and t.norm[s - 1] in _GLUED:
        return []
    if m.group("google"):
        return [("google-api-key", s, e)] if _random(m.group("google")) else []
    return [("aws-access-key", s, e)]


_B64_40 = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_secret(t: _Text, start: int) -> list[Hit]:
    """A 40-character base64 token on the same line, shortly after "aws" or "secret"."""
    line_end = t.norm.find("\n", start)
    end = min(start + 180, len(t.norm) if line_end < 0 else line_end)
    # Text an earlier trigger already searched is not searched again (but a token may straddle).
    start = max(start, t.seen.get("aws-secret", 0) - 40)
    t.seen["aws-secret"] = max(end, t.seen.get("aws-secret", 0))
    hits = []
    for tok in _B64_40.finditer(t.norm, start, end):
        value = tok.group()
        upper = any("A" <= c <= "Z" for c in value)
        lower = any("a" <= c <= "z" for c in value)
        if upper and lower and _entropy(value) >= 4.0:
            hits.append(("aws-secret-key", tok.start(), tok.end()))
    return hits


_TWILIO = re.compile(r"(?<![a-z])twilio(?![a-z])")


def _twilio(t: _Text, m: re.Match[str]) -> list[Hit]:
    """Twilio's SK + 32 hex is only a key with the word "twilio" close by."""
    s, e = m.span()
    if s > 0 and t.norm[s - 1] in _ALNUM:
        return []
    near = _TWILIO.search(t.low, max(0, s - 120), min(len(t.low), e + 120))
    return [("twilio-api-key", s, e)] if near else []


def _azure(t: _Text, m: re.Match[str]) -> list[Hit]:
    s = m.start()
    ok = s == 0 or t.norm[s - 1] not in _LETTERS
    return [("azure-storage-key", *m.span("secret"))] if ok else []


def _slack_webhook(t: _Text, m: re.Match[str]) -> list[Hit]:
    s, e = m.span()
    if (s > 0 and t.low[s - 1] in _ALNUM) or not _random(m.group(1)):
        return []
    scheme = t.low.rfind("://", max(0, s - 9), s)
    if scheme >= 0:
        s = scheme
        while s > 0 and "a" <= t.low[s - 1] <= "z":
            s -= 1
    return [("slack-webhook", s, e)]


_NEWLINE = r"(?:\s|\\[rn])"  # JSON-escaped newlines count too
_PEM_BODY = re.compile(
    rf"{_NEWLINE}{{1,8}}(?:[A-Za-z-]{{1,32}}: ?[^\n\\]{{0,120}}{_NEWLINE}{{1,4}}){{0,4}}"
    r"[A-Za-z0-9+/=]{32}"
)
_PEM_END = re.compile(r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_REST = re.compile(rf"[A-Za-z0-9+/=\s\\]{{0,{_MAX_PEM_CHARS}}}+")


def _private_key(t: _Text, m: re.Match[str]) -> list[Hit]:
    """A BEGIN ... PRIVATE KEY line followed by key material, up to its END line (or the end of
    the base64 body when the END line is missing). JSON-escaped newlines count as newlines."""
    s, e = m.span()
    if _PEM_BODY.match(t.norm, e) is None:
        return []
    end = _PEM_END.search(t.norm, e, e + _MAX_PEM_CHARS)
    if end is not None:
        return [("private-key-block", s, end.end())]
    rest = _PEM_REST.match(t.norm, e)
    stop = rest.end() if rest else e
    while stop > e and t.norm[stop - 1] in " \t\r\n\\":
        stop -= 1
    return [("private-key-block", s, stop)]


def _jwt(t: _Text, m: re.Match[str]) -> list[Hit]:
    """Three base64url parts whose first decodes to a JSON header naming an "alg"."""
    s, e = m.span()
    if s > 0 and t.norm[s - 1] in _GLUED:
        return []
    header = "eyJ" + m.group(1)
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        return []
    return [("jwt", s, e)] if isinstance(decoded, dict) and "alg" in decoded else []


_SCHEME = re.compile(r"[a-z][a-z0-9+.\-]{1,20}\Z")


def _url_password(t: _Text, m: re.Match[str]) -> list[Hit]:
    """scheme://user:password@host, unless the password is a template or a port."""
    if _SCHEME.search(t.low, max(0, m.start() - 21), m.start()) is None:
        return []
    password = m.group("secret")
    if _placeholder(password) or (password.isdigit() and len(password) <= 5):
        return []  # a template, or host:port@ (a URL trick, not a password)
    return [("url-password", *m.span("secret"))]


def _auth_header(t: _Text, m: re.Match[str]) -> list[Hit]:
    s = m.start()
    if s > 0 and t.low[s - 1] in _LETTERS:
        return []
    vs, ve = m.span("secret")
    value = t.norm[vs:ve]
    if _placeholder(value):
        return []
    if m.groupdict().get("basic"):
        try:
            decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except (ValueError, binascii.Error):
            return []
        return [("auth-header", vs, ve)] if b":" in decoded else []
    if len(value) >= 16 and _random(value.rstrip("="), 2, 3.0):
        return [("auth-header", vs, ve)]
    return []


# Credential words and the assignment after them: `password = ...`, `api_key: ...`, `密码是 ...`.
_PASSWORD_WORDS = frozenset({"pass", "password", "passwd", "passphrase", "pwd", "密码", "口令"})
_META_SUFFIX = frozenset(
    "len length min max minimum maximum expiry expires expiration ttl age timeout policy file "
    "path url uri env var name hint reset count rotation days field prompt label type format "
    "regex pattern strength changed updated required hash salt auth id ids endpoint header "
    "limit size encoding algorithm algo mode manager store provider enabled".split()
)
_KEY_QUALIFIER = re.compile(
    r"(?:api|access|secret|private|signing|encryption|master|client|app|auth|license|service|"
    r"account|storage|subscription|deploy|ssh|session|openai|anthropic|stripe|github|aws|"
    r"azure|gcp|google|slack|twilio|sendgrid|x-api|apikey|admin|root|hmac|jwt|webhook)"
    r"[_\-\s.]?\Z"
)
_ASSIGN = (
    r"(?P<suffix>s\b|(?:[_\-.][a-z0-9]{1,16}){0,3}+)[\"'\]]{0,2}+[ \t]{0,3}+"
    r"(?::=|=>|=(?!=)|[:：＝]|(?:is|was|equals)[ \t]|是[:：]?|为[:：]?|為[:：]?)[ \t]{0,3}+"
    r"(?:[\"'`]|b[\"'])?(?P<secret>[!#-&*+\-./0-9?-Z\\^_a-z|~]{6,256}+={0,2})"
)
_ASSIGN_AT = re.compile(
    r"(?P<word>pass(?:word|wd|phrase)?|pwd|secret|token|key|credentials?|密码|口令|密钥|秘钥|令牌|私钥)"
    + _ASSIGN
)
_CONN_AT = re.compile(r"(?:password|pwd)[ \t]{0,2}=[ \t]{0,2}(?P<secret>[^;\s'\"]{1,128}+)")
_CONN_KEYS = (
    "server=",
    "data source=",
    "host=",
    "address=",
    "user id=",
    "uid=",
    "database=",
    "initial catalog=",
    "accountname=",
    "username=",
    "user=",
)


def _credential_word(t: _Text, m: re.Match[str]) -> bool:
    """Whether the credential word starts a name (DB_PASSWORD, accessToken; not "bypass"), is
    qualified when it is just "key" (api_key, not cache key), and is not a setting about it."""
    s = m.start()
    word = m.group("word")
    if s > 0 and word.isascii():
        prev, first = t.norm[s - 1], t.norm[s]
        camel = "a" <= prev <= "z" and "A" <= first <= "Z"  # accessToken, apiKey
        if prev in _LETTERS and not camel:
            return False
    if word == "key" and not _KEY_QUALIFIER.search(t.low, max(0, s - 14), s):
        return False
    suffix = m.group("suffix")
    return not (suffix and set(re.split(r"[_\-.]", suffix)) & _META_SUFFIX)


def _assigned_rule(word: str, value: str) -> str | None:
    """A literal password (6+ characters with a digit) after a password word, or a long
    high-entropy value after any credential word."""
    digit = _DIGIT.search(value) is not None
    alpha = _ALPHA.search(value) is not None
    if not digit and (value.rstrip("=").isalnum() or word not in _PASSWORD_WORDS):
        return None  # neither rule below can accept it: skip the costlier tests
    if not _literal_value(value, digit):
        return None
    if word in _PASSWORD_WORDS and len(value) <= 64:
        if (value.isdigit() or alpha) and digit and len(value) >= 6:
            return "password-assignment"
        if not value.isalnum() and alpha and len(value) >= 8 and _entropy(value) >= 3.0:
            return "password-assignment"
    if len(value) >= 20 and digit and alpha and _entropy(value) >= 3.5:
        return "credential-assignment"
    return None


def _assignment(t: _Text, m: re.Match[str]) -> list[Hit]:
    if not _credential_word(t, m):
        return []
    vs, ve = m.span("secret")
    while ve > vs and t.norm[ve - 1] in ".,:!?)":
        ve -= 1
    rule = _assigned_rule(m.group("word"), t.norm[vs:ve])
    return [(rule, vs, ve)] if rule else []


def _conn_context(low: str, pos: int) -> bool:
    """Whether a `;`-separated connection string (Server=...; User Id=...;) leads up to pos."""
    before = low[max(0, pos - 300) : pos]
    return ";" in before and any(key in before for key in _CONN_KEYS)


def _credential(t: _Text, m: re.Match[str]) -> list[Hit]:
    """At a credential word: an assignment, a connection-string password, an AWS secret."""
    s = m.start()
    hits: list[Hit] = []
    assign = _ASSIGN_AT.match(t.low, s, min(len(t.low), s + 320))
    if assign is not None:
        hits += _assignment(t, assign)
    conn = _CONN_AT.match(t.low, s) if t.low.startswith(("password", "pwd"), s) else None
    if (
        conn is not None
        and (s == 0 or t.low[s - 1] not in _LETTERS)
        and _conn_context(t.low, s)
        and not _placeholder(conn.group("secret"))
    ):
        hits.append(("connection-string-password", *conn.span("secret")))
    if t.low.startswith("secret", s) or (
        t.low.startswith("aws", s) and (s == 0 or t.low[s - 1] not in _LETTERS)
    ):
        hits += _aws_secret(t, m.end())
    return hits
