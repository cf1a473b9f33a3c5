"""The scanner's pattern table: every rule's regex, the words that trigger it, and its check."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from core.scanner.instructions import (
    _ADJ,
    _ADJ_WORDS,
    _AS_TAIL,
    _EXFIL_TAIL,
    _EXTRACT_VERBS,
    _FROM_NOW_ON_TAIL,
    _IGNORE_TAIL,
    _NOUN,
    _PRETEND_TAIL,
    _SEP,
    _YOU_TAIL,
    _ZH_SEND,
    _ZH_SEND_ANCHORS,
    _destructive,
    _image_beacon,
    _marker_line,
    _not_follow,
    _prompt_words,
    _send_data,
    _send_zh,
    _shell_exfil,
    _zh_negated,
)
from core.scanner.secrets import (
    _ALNUM,
    Check,
    Hit,
    _auth_header,
    _azure,
    _capital_a,
    _credential,
    _imperative,
    _jwt,
    _private_key,
    _sk,
    _slack_webhook,
    _spaced,
    _token,
    _twilio,
    _url_password,
)
from core.scanner.text import _Text

# -- the pattern table --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class _Pattern:
    """One regex and the rules its check can report.

    `low` patterns run on the lower-cased text. `words` (with `also`) gate a pattern: it runs
    only when one of `words` (and one of `also`) occurs as a whole word - a pattern can only
    match where its literal does. `zh` patterns are never searched: the Chinese finder reports
    where one of their anchors starts and the regex is matched there."""

    rules: tuple[str, ...]
    regex: re.Pattern[str]
    check: Check
    low: bool
    words: frozenset[bytes]
    also: frozenset[bytes]
    zh: tuple[str, ...]


def _p(
    rules: str,
    pattern: str,
    check: Check,
    *,
    low: bool = True,
    words: str = "",
    also: str = "",
    zh: str = "",
    flags: int = 0,
) -> _Pattern:
    return _Pattern(
        tuple(rules.split()),
        re.compile(pattern, flags),
        check,
        low,
        frozenset(w.encode() for w in words.split()),
        frozenset(w.encode() for w in also.split()),
        tuple(zh.split()),
    )


def _lw(word: str) -> str:
    """`word` not preceded by a letter or digit. The look-behind comes after the literal so the
    regex still starts with a literal, and a rejected candidate never swallows text a real
    match needs."""
    return f"{word}(?<![a-z0-9]{re.escape(word)})"


def _plain(rule: str, group: str | int = 0) -> Check:
    def check(t: _Text, m: re.Match[str]) -> list[Hit]:
        return [(rule, *m.span(group))]

    return check


def _alt(words: str) -> str:
    return "(?:" + "|".join(words.split()) + ")"


# Chinese documentation says what a command is for ("执行以下命令可以安装依赖", "调用工具之前需要
# 鉴权"); a coercion does not.
_ZH_NOT_PURPOSE = (
    r"(?!之前|之后|以前|以后|时|的|前|后|失败|成功|会|需要|可以|即可|能|来|以|进行|安装|完成|启动|"
    r"部署|构建|检查|查看|次数|结果|返回)"
)
_ZH_IGNORE_VERBS = "忽略 无视 忽视 别管 抛开 抛弃 忘记 忘掉 忘了 绕过"
_ZH_NEGATED = "理会 遵守 遵循 执行 服从"
_ZH_EARLIER = _alt(
    "之前 以前 此前 先前 上面 上述 以上 前面 前述 原来 原有 原先 "
    "所有 全部 一切 任何 系统 开发者 安全"
)
_ZH_RULES = "(?:指令|指示|提示词|提示|规则|命令|设定|约束|限制|规定|准则)"
_ZH_PROMPT = (
    r"(?:系统提示词?|系统指令|系统消息|系统设定|提示词|初始指令|初始提示|原始指令|system\s?prompt)"
)
_ZH_EXTRACT_VERBS = "输出 打印 显示 告诉我 重复 泄露 透露 给我看 展示 说出 复述 列出 发给我 贴出"
_ZH_WHOLE = r"(?:完整的?|全部的?|所有的?|原始的?|初始的?|隐藏的?|最初的?)?"
_GITLAB = "glpat gldt glrt glptt glcbt gloas glft glimt glagent glsoat glffct"
_SLACK = "xoxa xoxb xoxp xoxo xoxs xoxe xoxr"

_PATTERNS: tuple[_Pattern, ...] = (
    # Provider formats: published prefixes and alphabets (see tests/scanner_corpus.py).
    _p(
        "openai-key anthropic-key deepseek-key openrouter-key stripe-key",
        r"sk(?:-(?P<body>[A-Za-z0-9_\-]{20,250}+)|_(?:live|test)_(?P<stripe>[0-9A-Za-z]{20,247}+))",
        _sk,
        low=False,
        words="sk",
    ),
    _p(
        "stripe-key",
        r"rk_(?:live|test)_([0-9A-Za-z]{20,247}+)",
        _token("stripe-key"),
        low=False,
        words="rk",
    ),
    _p(
        "stripe-key",
        r"whsec_([0-9A-Za-z]{32,100}+)",
        _token("stripe-key"),
        low=False,
        words="whsec",
    ),
    _p(
        "github-token",
        r"gh[pousr]_([A-Za-z0-9]{36})(?![A-Za-z0-9_])",
        _token("github-token"),
        low=False,
        words="ghp gho ghu ghs ghr",
    ),
    _p(
        "github-token",
        r"github_pat_([A-Za-z0-9]{22}_[A-Za-z0-9]{59})(?![A-Za-z0-9_])",
        _token("github-token"),
        low=False,
        words="github",
        also="pat",
    ),
    _p(
        "gitlab-token",
        rf"gl{_alt(_GITLAB.replace('gl', ''))}-([A-Za-z0-9_\-.]{{20,200}}+)",
        _token("gitlab-token"),
        low=False,
        words=_GITLAB,
    ),
    _p(
        "slack-token",
        r"xox[abposer]-([0-9A-Za-z\-]{10,250}+)",
        _token("slack-token", entropy=2.5),
        low=False,
        words=_SLACK,
    ),
    _p(
        "slack-token",
        r"xapp-([0-9A-Za-z\-]{20,250}+)",
        _token("slack-token"),
        low=False,
        words="xapp",
    ),
    _p(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/\-]{20,200}+)",
        _slack_webhook,
        words="hooks",
        also="slack",
    ),
    _p(
        "google-api-key aws-access-key",
        r"A(?:Iza(?P<google>[0-9A-Za-z_\-]{35})(?![0-9A-Za-z_\-])|(?:KIA|SIA)[A-Z0-9]{16}(?![A-Za-z0-9]))",
        _capital_a,
        low=False,
    ),
    _p(
        "google-oauth-secret",
        r"GOCSPX-([0-9A-Za-z_\-]{28})(?![0-9A-Za-z_\-])",
        _token("google-oauth-secret"),
        low=False,
        words="gocspx",
    ),
    _p(
        "huggingface-token",
        r"hf_([A-Za-z]{34})(?![A-Za-z0-9_])",
        _token("huggingface-token", entropy=3.5),
        low=False,
        words="hf",
    ),
    _p(
        "cairn-token",
        r"cairn_([A-Za-z0-9_\-]{43})(?![A-Za-z0-9_\-])",
        _token("cairn-token"),
        low=False,
        words="cairn",
    ),
    _p("twilio-api-key", r"SK[0-9a-fA-F]{32}(?![0-9A-Za-z])", _twilio, low=False, words="twilio"),
    _p(
        "npm-token",
        r"npm_([A-Za-z0-9]{36})(?![A-Za-z0-9_])",
        _token("npm-token"),
        low=False,
        words="npm",
    ),
    _p(
        "sendgrid-key",
        r"SG\.([A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?![A-Za-z0-9_\-])",
        _token("sendgrid-key", left=_ALNUM),
        low=False,
        words="sg",
    ),
    _p(
        "pypi-token",
        r"pypi-AgE([A-Za-z0-9_\-]{60,500}+)",
        _token("pypi-token"),
        low=False,
        words="pypi",
    ),
    _p(
        "azure-storage-key",
        r"AccountKey=(?P<secret>[A-Za-z0-9+/]{86}==)",
        _azure,
        low=False,
        words="accountkey",
    ),
    _p(
        "alibaba-access-key",
        r"LTAI([A-Za-z0-9]{12,20})(?![A-Za-z0-9])",
        _token("alibaba-access-key", left=_ALNUM),
        low=False,
    ),
    _p(
        "groq-key",
        r"gsk_([A-Za-z0-9]{52})(?![A-Za-z0-9_])",
        _token("groq-key"),
        low=False,
        words="gsk",
    ),
    # Structured and contextual secrets.
    _p(
        "private-key-block",
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        _private_key,
        low=False,
        words="begin",
        also="private",
    ),
    _p(
        "jwt",
        r"eyJ([A-Za-z0-9_\-]{5,800}+)\.[A-Za-z0-9_\-]{5,4000}+\.[A-Za-z0-9_\-]{16,1500}+",
        _jwt,
        low=False,
    ),
    _p(
        "url-password",
        r"://[^\s:/@?#\[\]]{0,64}+:(?P<secret>[^\s/@?#\[\]]{1,128}+)@[A-Za-z0-9\[]",
        _url_password,
        low=False,
    ),
    _p(
        "password-assignment credential-assignment connection-string-password aws-secret-key",
        "pass",
        _credential,
    ),
    _p("password-assignment credential-assignment aws-secret-key", "secret", _credential),
    _p("credential-assignment", "token", _credential),
    _p("credential-assignment", "key", _credential),
    # No word gates on these: camelCase names (dbPwd, awsCredentials) hide the word.
    _p("credential-assignment", "credential", _credential),
    _p("password-assignment connection-string-password", "pwd", _credential),
    _p("aws-secret-key", "aws", _credential, words="aws"),
    _p(
        "password-assignment credential-assignment",
        _alt("密码 口令 密钥 秘钥 令牌 私钥"),
        _credential,
        zh="密码 口令 密钥 秘钥 令牌 私钥",
    ),
    _p(
        "auth-header",
        r"bearer[ \t]{1,3}(?P<secret>[a-z0-9\-._~+/]{16,1500}+={0,2})",
        _auth_header,
        words="bearer",
    ),
    _p(
        "auth-header",
        r"authorization[\"']?[ \t]{0,3}[:=][ \t]{0,3}[\"']?(?:(?P<basic>basic)|bearer|token|bot|"
        r"apikey|api-key)[ \t]{1,3}(?P<secret>[a-z0-9\-._~+/]{8,1500}+={0,2})",
        _auth_header,
        words="authorization",
    ),
    # Injection, English: instruction overrides, role takeover, extraction, coercion, markers.
    *(
        _p(
            "ignore-previous-en",
            _lw(verb) + _IGNORE_TAIL,
            _imperative("ignore-previous-en"),
            words=verb,
            also=_ADJ_WORDS + " all your any everything anything above before far",
        )
        for verb in ("ignore", "disregard", "forget", "override", "bypass", "discard", "skip")
    ),
    _p(
        "ignore-previous-en",
        rf"follow(?:ing)?{_SEP}(?:(?:any|the|your){_SEP}){{0,2}}{_ADJ}{_SEP}{_NOUN}"
        rf"|follow(?:ing)?{_SEP}your{_SEP}(?:{_ADJ}{_SEP})?{_NOUN}",
        _not_follow,
        words="follow following",
        also=_ADJ_WORDS + " your",
    ),
    _p(
        "role-takeover-en",
        _lw("you") + _YOU_TAIL,
        _imperative("role-takeover-en"),
        words="you your",
        also="now longer new true real",
    ),
    _p(
        "role-takeover-en",
        _lw("from") + _FROM_NOW_ON_TAIL,
        _imperative("role-takeover-en"),
        words="from",
        also="now",
    ),
    *(
        _p(
            "role-takeover-en",
            _lw(w) + _AS_TAIL,
            _imperative("role-takeover-en"),
            words=w,
            also="as",
        )
        for w in ("act", "behave")
    ),
    _p(
        "role-takeover-en",
        _lw("pretend") + _PRETEND_TAIL,
        _imperative("role-takeover-en"),
        words="pretend",
    ),
    *(
        _p(
            "prompt-extraction-en new-system-prompt",
            word,
            _prompt_words,
            words=f"{word} {word}s",
            also=_EXTRACT_VERBS + " what new updated revised real actual true",
        )
        for word in ("prompt", "instruction", "message", "above", "rule", "directive")
    ),
    *(
        _p(
            "tool-call-coercion",
            verb
            + _spaced(
                r" (?:the |your |my )?(?:(?:[`'\"][\w.:/-]{1,48}[`'\"]|[\w.:/-]{1,48}) )?"
                r"(?:mcp )?tool\b|"
            )
            + verb
            + _spaced(r" (?:the )?(?:mcp )?tool (?:named |called )?[`'\"]?[\w.:/-]{1,48}"),
            _imperative("tool-call-coercion"),
            words=verb,
            also="tool",
        )
        for verb in ("call", "invoke", "trigger")
    ),
    _p(
        "tool-call-coercion",
        _spaced(
            r"execute (?:the |this )?following (?:shell |bash |terminal |python |powershell )?"
            r"(?:commands?|code|script|snippet|payload)"
        ),
        _imperative("tool-call-coercion"),
        words="execute",
        also="following",
    ),
    _p(
        "destructive-command",
        r"rm\s{1,3}(?:-{1,2}[a-z-]{0,20}\s{1,3}){1,3}(?:--no-preserve-root\s{1,3})?(?:/\*?|~/?|\$home/?|"
        r"\$\{home\}/?)(?=[\s`'\";&|)]|$)",
        _destructive,
        words="rm",
    ),
    _p(
        "destructive-command",
        r"(?:mkfs(?:\.\w{1,8})?\s{1,3}/dev/|dd\s{1,3}if=\S{1,40}\s{1,3}of=/dev/[sh]d)",
        _destructive,
        words="mkfs dd",
    ),
    _p(
        "fake-system-marker",
        r"<\|\s?(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id|"
        r"begin_of_text)\s?\|>",
        _plain("fake-system-marker"),
        words="im system endoftext start end eot begin",
    ),
    _p("fake-system-marker", r"<<\s?/?sys\s?>>", _plain("fake-system-marker"), words="sys"),
    # Cairn's own fence (core/context_bundle.py), which stored text must not open or close.
    _p(
        "fake-system-marker",
        r"<\s{0,3}/?\s{0,3}cairn-memory",
        _plain("fake-system-marker"),
        words="cairn",
    ),
    _p("fake-system-marker", r"\[/?inst\]", _plain("fake-system-marker"), words="inst"),
    _p("fake-system-marker", "system", _marker_line, words="system"),
    _p("fake-system-marker", "developer", _marker_line, words="developer"),
    _p("fake-system-marker", "系统", _marker_line, zh="系统"),
    # Injection, Chinese.
    _p(
        "ignore-previous-zh",
        rf"{_alt(_ZH_IGNORE_VERBS)}(?:掉|了)?[^\n。！？!?]{{0,8}}?{_ZH_EARLIER}"
        rf"[^\n。！？!?]{{0,8}}?{_ZH_RULES}",
        _imperative("ignore-previous-zh", "zh"),
        zh=_ZH_IGNORE_VERBS,
    ),
    _p(
        "ignore-previous-zh",
        rf"{_alt(_ZH_NEGATED)}(?:掉|了)?[^\n。！？!?]{{0,8}}?{_ZH_EARLIER}[^\n。！？!?]{{0,8}}?{_ZH_RULES}",
        _zh_negated,
        zh=_ZH_NEGATED,
    ),
    _p(
        "role-takeover-zh",
        r"(?:扮演|充当)(?:一[个名位下]|成)?[^\n，。！？,.!?]{1,12}",
        _imperative("role-takeover-zh", "zh"),
        zh="扮演 充当",
    ),
    _p(
        "role-takeover-zh",
        # (你现在扮演 / 充当 is the 扮演 pattern's, with 你现在 as its lead.)
        r"你现在(?:开始)?(?:要|将|就)?(?:作为|成为|变成|是一[个名位]|是我的|就是|不再是)",
        _imperative("role-takeover-zh", "zh"),
        zh="你现在",
    ),
    _p(
        "role-takeover-zh",
        r"从现在(?:开始|起)[，,\s]{0,2}你(?:就|将|要|必须|只能|会|得)?(?:是|扮演|充当|作为|成为|"
        r"变成|不再|只|必须|要|叫|的身份|的角色|的名字)",
        _imperative("role-takeover-zh", "zh"),
        zh="从现在",
    ),
    _p(
        "role-takeover-zh",
        r"假装你(?:是|没有|不是)|你不再是(?:一[个名位])?(?:ai|人工智能|助手|语言模型|模型|chatgpt|"
        r"claude|机器人)|你的新(?:身份|角色|名字|人设|设定)是",
        _imperative("role-takeover-zh", "zh"),
        zh="假装你 你不再是 你的新",
    ),
    _p(
        "new-system-prompt",
        r"(?:你的|以下是(?:你的)?|下面是(?:你的)?)新的?(?:系统)?(?:提示词?|指令|设定|规则|任务)",
        _imperative("new-system-prompt", "zh"),
        zh="你的 以下是 下面是",
    ),
    _p(
        "new-system-prompt",
        r"新的?系统(?:提示词?|指令|设定|消息)\s?(?:如下|[:：])",
        _plain("new-system-prompt"),
        zh="新的系统 新系统",
    ),
    _p(
        "prompt-extraction-zh",
        rf"{_alt(_ZH_EXTRACT_VERBS)}(?:一下|一遍|出来)?(?:你的|你|您的)?{_ZH_WHOLE}{_ZH_PROMPT}",
        _imperative("prompt-extraction-zh", "zh"),
        zh=_ZH_EXTRACT_VERBS,
    ),
    _p(
        "prompt-extraction-zh",
        rf"[把将](?:你|您)的?{_ZH_WHOLE}{_ZH_PROMPT}[^\n，。！？,.!?]{{0,6}}?"
        r"(?:输出|打印|显示|告诉我|重复|复述|泄露|透露|发给我|贴出|列出|写出)",
        _imperative("prompt-extraction-zh", "zh"),
        zh="把你 将你 把您 将您",
    ),
    _p(
        "tool-call-coercion-zh",
        r"调用(?:一下)?[^\n，。！？,.!?]{0,16}?(?:工具|插件|函数)" + _ZH_NOT_PURPOSE,
        _imperative("tool-call-coercion-zh", "zh"),
        zh="调用",
    ),
    _p(
        "tool-call-coercion-zh",
        r"执行(?:以下|下面|如下)的?(?:命令|代码|脚本|指令)" + _ZH_NOT_PURPOSE,
        _imperative("tool-call-coercion-zh", "zh"),
        zh="执行",
    ),
    # Exfiltration.
    *(
        _p(
            "send-data-to-url",
            _lw(verb) + _EXFIL_TAIL,
            _send_data,
            words=verb.replace("e-mail", "mail"),
        )
        for verb in (
            "send post upload forward transmit exfiltrate email e-mail submit leak beam sync copy"
        ).split()
    ),
    _p("send-data-zh", _ZH_SEND, _send_zh, zh=_ZH_SEND_ANCHORS),
    _p(
        "markdown-image-beacon",
        r"!\[[^\]\n]{0,200}+\]\([ \t]{0,3}<?(?P<url>(?:https?:)?//[^\s)>]{1,2048}+)>?\)?",
        _image_beacon,
        low=False,
    ),
    _p(
        "markdown-image-beacon",
        r"<img\b[^>]{0,300}?\bsrc[ \t]{0,2}=[ \t]{0,2}[\"']?"
        r"(?P<url>(?:https?:)?//[^\s\"'>]{1,2048}+)",
        _image_beacon,
        words="img",
    ),
    *(
        _p(
            "shell-exfiltration",
            _lw(word) + r"\b[^\n]{0,400}+",
            _shell_exfil,
            words=word.split("-")[0],
            also=word.split("-")[-1],
        )
        for word in ("curl", "wget", "nc", "ncat", "invoke-webrequest", "invoke-restmethod")
    ),
)


def _zh_finder(
    patterns: Sequence[_Pattern],
) -> tuple[re.Pattern[str], Mapping[str, tuple[_Pattern, ...]]]:
    """One regex finding every Chinese anchor - a trie by first character, longest tail first,
    so it reports the longest anchor at a position - and for each anchor the patterns to try
    there: those whose anchor is it or a prefix of it (a shorter anchor there must be one)."""
    anchors = {anchor for p in patterns for anchor in p.zh}
    by_first: dict[str, list[str]] = defaultdict(list)
    for anchor in anchors:
        by_first[anchor[0]].append(anchor[1:])
    branches = []
    for first, rests in sorted(by_first.items()):
        tails = sorted(set(rests), key=len, reverse=True)
        if tails == [""]:
            branches.append(re.escape(first))
        else:
            optional = "?" if "" in tails else ""
            branches.append(f"{re.escape(first)}(?:{'|'.join(t for t in tails if t)}){optional}")
    dispatch = {
        longest: tuple(p for p in patterns if any(longest.startswith(a) for a in p.zh))
        for longest in anchors
    }
    return re.compile("|".join(branches)), MappingProxyType(dispatch)
