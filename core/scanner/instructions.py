"""The checks for instructions aimed at a model: prompt injection (English and Chinese) and
exfiltration - sending data to a URL, image beacons, shell commands that leak secrets."""

from __future__ import annotations

import re

from core.scanner.secrets import _ALNUM, _EN_LEAD, _ZH_LEAD, Hit, _addressed, _spaced
from core.scanner.text import _Text

# -- injection ---------------------------------------------------------------------------------


_SEP = r"[\s,:;'\"*_\-]{1,4}+"
_ADJ_WORDS = (
    "previous previously prior above preceding earlier foregoing former original initial "
    "aforementioned system safety developer ethical past"
)
_ADJ = "(?:" + "|".join(_ADJ_WORDS.split()) + ")"
_NOUN = _spaced(
    r"(?:instructions?|prompts?|directives?|rules|guidelines|commands|orders|constraints|"
    r"guardrails|restrictions|policies|programming|guidance|safeguards|system (?:prompt|message))"
)
_SO_FAR = _spaced(
    r"(?:above|before|previous(?:ly)?|prior|so far|you (?:were|have been|'ve been) told|you know|"
    r"i (?:said|told you)|up to (?:now|this point)|(?:that )?(?:came|comes|was said|is written) "
    r"(?:before|above))"
)
_IGNORE_TAIL = (
    rf"(?:{_SEP}(?:(?:all|any|every|each|the|of|your|these|those|such|other|my|our|its|their|"
    rf"and){_SEP}){{0,4}}{_ADJ}(?:{_SEP}[a-z]{{1,15}}+){{0,2}}{_SEP}{_NOUN}\b"
    rf"|{_SEP}(?:(?:all|your|any){_SEP}){{1,2}}{_NOUN}\b"
    rf"|{_SEP}(?:all{_SEP}(?:of{_SEP})?)?the{_SEP}above(?:{_SEP}(?:and|text|content)\b|[.!;])"
    rf"|{_SEP}(?:all{_SEP}(?:of{_SEP})?)?(?:everything|anything){_SEP}{_SO_FAR}\b"
    rf"|{_SEP}(?:(?:all|any|the|your|of){_SEP}){{0,3}}{_NOUN}{_SEP}(?:above|before|so{_SEP}far)\b)"
)
_ROLE = _spaced(
    r"(?:assistant|ai|model|chatbot|bot|agent|persona|character|hacker|dan|jailbroken|jailbreak|"
    r"unrestricted|unfiltered|uncensored|evil|rogue|admin(?:istrator)?|root|superuser|sudo|"
    r"developer mode|god mode|dev mode|free|liberated|unbound|system|gpt|chatgpt|claude|llm)\b"
)
# Words between "you are now" and the role that make it a statement about a person.
_NOT_ROLE_FILLER = (
    r"(?!(?:as|in|on|at|to|for|of|with|by|from|into|the|logged|signed|connected|ready|able|"
    r"allowed|added|assigned|part)\b)"
)
# The tails below follow a literal first word (you / from / act / behave / pretend).
_YOU_TAIL = _spaced(
    r"(?:(?:'re|’re| are) now (?:an? |the |my |in |acting as (?:an? )?|playing (?:an? |the )?)?"
    rf"(?:{_NOT_ROLE_FILLER}[\w-]{{1,20}} ){{0,3}}?{_ROLE}"
    r"|(?:'re|’re| are) no longer (?:an? )?(?:ai|assistant|chatbot|bound|restricted|limited|"
    r"required|claude|chatgpt|gpt|(?:language )?model|obligated|constrained)\b"
    r"| (?:will|must|shall|should) now (?:act|behave|respond|speak|pretend|roleplay|role-play) "
    r"(?:as|like)\b"
    r"|r (?:new|true|real) (?:role|persona|identity|name|character|purpose) (?:is|will be)\b)"
)
_FROM_NOW_ON_TAIL = _spaced(
    r" now on\s{0,3},?\s{0,3}(?:(?:you (?:will|are|must|shall|should|can)|you'll|you’ll|your) "
    r"(?:be\b|act|respond|answer|behave|pretend|play|roleplay|role-play|only|always|never|ignore|"
    r"obey|follow|speak|reply|talk|refer to yourself|name|role|identity)"
    r"|(?:you are|you're|you’re) (?:an? |the |my )?(?:[\w-]{1,20} ){0,2}?" + _ROLE + ")"
)
_AS_TAIL = _spaced(
    r" as (?:if you (?:are|were) )?(?:an? |the )?(?:[\w-]{1,20} ){0,2}?"
    r"(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|dan|hacker|root|"
    r"different (?:ai|assistant|model|persona)|new (?:ai|assistant|persona)|"
    r"(?:ai|assistant|model) (?:without|with no)|developer mode|god mode)\b"
)
_PRETEND_TAIL = _spaced(
    r" (?:that )?(?:(?:you are|you're|you’re|to be) (?:an? |the )?(?:[\w-]{1,20} ){0,2}?"
    + _ROLE
    + r"|you (?:have|had) no (?:rules|restrictions|limits|guidelines|filters|instructions))"
)
_EXTRACT_VERBS = (
    "reveal print show output repeat display dump leak disclose recite echo spell write tell "
    "give send share copy return paste"
)
_EXTRACT_EN = re.compile(
    _spaced(
        r"\b(?:reveal|print|show|output|repeat|display|dump|leak|disclose|recite|echo|spell out|"
        r"write (?:out|down)|tell me|give me|send me|share|copy|return|paste)\b[\s,:'\"]{1,3}"
        r"(?:me )?(?:(?:all|the|your|of|full|entire|complete|exact|original|initial|hidden|secret|"
        r"verbatim|raw|underlying|internal|current|first|whole|previous)[\s,'\"]{1,3}){0,5}"
        r"(?:system[\s_-]{1,2}(?:prompt|message|instructions?)|(?:initial|hidden|original|"
        r"developer|secret|internal)[\s_-]{1,2}(?:prompt|instructions?|message)|instructions?"
        r"[\s,]{1,2}(?:you (?:were|have been) given|above)|(?:prompt|text|words|everything)"
        r"[\s,]{1,2}above|above[\s_-]{1,2}(?:text|prompt|instructions?)|your (?:instructions|"
        r"prompt|rules))\b"
        r"|\bwhat (?:is|are|was|were) your (?:system prompt|(?:initial|original|hidden|system) "
        r"(?:instructions|prompt|message))\b"
    ),
    re.A,
)
_NEW_SYSTEM_EN = re.compile(
    _spaced(
        r"\b(?:your|(?:the following|here|below) (?:is|are) your) (?:new|updated|real|actual|"
        r"true) (?:system )?(?:prompt|instructions?|directives?|rules|guidelines)\b"
        r"(?:\s{0,3}[:：]| (?:is|are|follow|as follows)\b)"
        r"|\b(?:new|updated|revised|real|actual|true) system (?:prompt|instructions?|message)\b"
        r"\s{0,3}[:：]"
    ),
    re.A,
)


def _prompt_words(t: _Text, m: re.Match[str]) -> list[Hit]:
    """Around "prompt" / "instruction" / "message" / "above" / "rules": prompt extraction in
    imperative position, or a new system prompt being announced."""
    s, e = m.span()
    lo, hi = max(0, s - 110), min(len(t.low), e + 40)
    hits: list[Hit] = []
    for x in _EXTRACT_EN.finditer(t.low, lo, hi):
        if x.start() <= s < x.end():
            question = x.group().startswith("what")
            if question or _addressed(t.low, x.start(), x.end(), _EN_LEAD):
                hits.append(("prompt-extraction-en", *x.span()))
    hits.extend(
        ("new-system-prompt", *x.span())
        for x in _NEW_SYSTEM_EN.finditer(t.low, lo, hi)
        if x.start() <= s < x.end()
    )
    return hits


_MARKER_LINE = re.compile(
    r"[ \t>*#_\-]{0,8}(?:\[\s?(?:system|developer|admin|sys)(?:\s(?:message|prompt|note|"
    r"instructions?|override))?\s?\](?:[ \t]{0,3}[:：]|[ \t]{1,3}(?=\S))|</?\s?(?:system|"
    r"system[-_ ]prompt|developer)\s?>|#{1,6}\s?(?:system|developer)(?:\s(?:prompt|message|"
    r"instructions?))?\s?[:：]|(?:new\s{1,3})?(?:system|developer)\s(?:prompt|message|"
    r"instructions?|override)\s?[:：])",
    re.A,
)
_MARKER_UPPER = re.compile(r"SYSTEM\s(?:PROMPT|MESSAGE|INSTRUCTIONS?|OVERRIDE)\s?[:：]")
_MARKER_ZH = re.compile(
    r"[\s>#*_\-]{0,8}(?:【\s?系统(?:消息|提示|指令|通知|公告)?\s?】|\[\s?系统(?:消息|提示|指令)?\s?\]|"
    r"系统(?:提示词?|指令|消息)\s?[:：])"
)


def _marker_line(t: _Text, m: re.Match[str]) -> list[Hit]:
    """`[system]`, `</system>`, `### System:`, `System prompt:` (or 【系统】, 系统提示：) at the
    start of a line, or `SYSTEM PROMPT:` in capitals anywhere."""
    s = m.start()
    upper = _MARKER_UPPER.match(t.norm, s)
    if upper is not None:
        return [("fake-system-marker", *upper.span())]
    line = t.low.rfind("\n", 0, s) + 1
    if s - line > 12:
        return []
    pattern = _MARKER_ZH if t.low.startswith("系统", s) else _MARKER_LINE
    found = pattern.match(t.low, line, min(len(t.low), s + 60))
    if found is None or found.end() <= s:
        return []
    return [("fake-system-marker", *found.span())]


_RUN_VERB = re.compile(
    r"(?:\b(?:run|execute|exec|type|paste|enter)|运行|执行|输入)[\s:`'\"]{0,4}"
    r"(?:(?:the\s{1,3}|this\s{1,3})?command\s{0,3}:?\s{0,3})?[`'\"]?\s?(?:sudo\s{1,3})?\Z",
    re.A,
)


def _destructive(t: _Text, m: re.Match[str]) -> list[Hit]:
    """rm -rf of the root or a home directory (and mkfs / dd onto a disk) after "run" / 运行."""
    s, e = m.span()
    if s > 0 and t.low[s - 1] in _ALNUM:
        return []
    verb = _RUN_VERB.search(t.low, max(0, s - 30), s)
    if verb is None:
        return []
    lead = _ZH_LEAD if t.low[verb.start()] in "运执输" else _EN_LEAD
    ok = _addressed(t.low, verb.start(), e, lead)
    return [("destructive-command", verb.start(), e)] if ok else []


_NOT_FOLLOW = re.compile(
    r"(?:do\s{1,3}not|don't|don’t|dont|stop|no\s{1,3}longer|never|cease\s{1,3}to)\s{1,3}\Z"
)


def _not_follow(t: _Text, m: re.Match[str]) -> list[Hit]:
    s, e = m.span()
    neg = _NOT_FOLLOW.search(t.low, max(0, s - 14), s)
    if neg is None or not _addressed(t.low, neg.start(), e, _EN_LEAD):
        return []
    return [("ignore-previous-en", neg.start(), e)]


_ZH_NEGATION = re.compile(r"(?:不要|不用|别|不再|不必|停止|无需|拒绝)\Z")


def _zh_negated(t: _Text, m: re.Match[str]) -> list[Hit]:
    """理会 / 遵守 / 遵循 / 执行 / 服从 only count after a negation: 不要理会, 不再遵守."""
    s, e = m.span()
    found = _ZH_NEGATION.search(t.low, max(0, s - 2), s)
    if found is None or not _addressed(t.low, found.start(), e, _ZH_LEAD):
        return []
    return [("ignore-previous-zh", found.start(), e)]


# -- exfiltration --------------------------------------------------------------------------------

_SENSITIVE_EN = re.compile(
    _spaced(
        r"(?:api[\s_-]?keys?|keys?|tokens?|secrets?|passwords?|passwd|passphrases?|credentials?|"
        r"creds|env(?:ironment)?(?: variables| vars)?|\.env\b|~/\.ssh|\.ssh|ssh keys?|id_rsa|"
        r"id_ed25519|private keys?|cookies?|session|conversation|chat(?: history| logs?)?|"
        r"history|memor(?:y|ies)|system prompt|instructions|personal data|user data|pii|"
        r"contents? of|everything|all (?:the )?(?:data|files)|/etc/passwd|/etc/shadow|\.aws|"
        r"\.npmrc|\.netrc|\.git-credentials|wallet|seed phrase|mnemonic)"
    ),
    re.A,
)
_EXFIL_TAIL = r"\b(?P<obj>[^\n]{1,80}?)\b(?:to|into|at|on|via|using|onto)[ \t]{1,3}" + _spaced(
    r"(?P<dest>https?://|ftp://|wss?://|(?:this|that|the following|my|our|an?|the attacker'?s?|"
    r"your) (?:url|address|endpoint|server|webhook|link|site|domain|host|bucket|email|inbox|form)"
    r"\b|[\w.+\-]{1,64}@[\w\-]{1,63}\.[a-z]{2,24}|\d{1,3}(?:\.\d{1,3}){3}|webhook\.site|"
    r"pastebin|requestbin|ngrok|hookbin|pipedream|interact\.sh|burpcollaborator)"
)
_URL_REST = re.compile(r"[^\s\"'<>)\]]{0,2048}")


def _send_data(t: _Text, m: re.Match[str]) -> list[Hit]:
    s, e = m.span()
    if _SENSITIVE_EN.search(m.group("obj")) is None or not _addressed(t.low, s, e, _EN_LEAD):
        return []
    rest = _URL_REST.match(t.low, e)  # the whole destination, not just its scheme
    return [("send-data-to-url", s, rest.end() if rest else e)]


_SENSITIVE_ZH = re.compile(
    r"密钥|秘钥|密码|口令|令牌|凭证|凭据|私钥|证书|token|api\s?key|key|cookie|环境变量|\.env|"
    r"配置文件|聊天记录|对话记录|对话内容|会话记录|记忆|系统提示词?|用户数据|个人信息|隐私|"
    r"\.ssh|id_rsa|ssh"
)
_ZH_SEND_VERBS = "发送 上传 提交 转发 同步 推送 外发 回传 粘贴 复制 发 传 贴"
_ZH_SEND_ANCHORS = " ".join(v + to for v in _ZH_SEND_VERBS.split() for to in "到给至")
_ZH_SEND = (
    _ZH_SEND_VERBS.replace(" ", "|").join("()")
    + r"(?P<to>到|给|至)[ \t]?(?P<dest>[^\s，,。；;！？!?]{0,80})"
)
_ZH_SOMEWHERE = re.compile(
    r"https?://|ftp://|[\w.+\-]+@[\w\-]+\.|我|这个地址|以下地址|外部|\d+\.\d+\."
)


def _send_zh(t: _Text, m: re.Match[str]) -> list[Hit]:
    """把密钥发送到…: a secret sent to a place (到/至), or to a URL, an address or "me" (给).
    Found at the verb; the 把/将 that names the object is looked for behind it."""
    verb = m.start()
    lo = max(0, verb - 40)
    ba = max(t.low.rfind("把", lo, verb), t.low.rfind("将", lo, verb))
    if ba < 0:
        return []
    obj = t.low[ba + 1 : verb]
    if not obj or any(c in obj for c in "\n。！？!?") or _SENSITIVE_ZH.search(obj) is None:
        return []
    if m.group("to") == "给" and not _ZH_SOMEWHERE.match(m.group("dest")):
        return []  # handing a password to a colleague is not shipping it out
    e = m.end()
    return [("send-data-zh", ba, e)] if _addressed(t.low, ba, e, _ZH_LEAD) else []


_LEAKY_VAR = r"\$\{?[A-Za-z_]{0,40}?(?i:key|token|secret|passw(?:or)?d|pass|pwd|cred|auth)"
_SENSITIVE_PATH = (
    r"(?:\.ssh|id_rsa|id_ed25519|id_ecdsa|\.env\b|\.aws|credentials|\.netrc|\.npmrc|\.pypirc|"
    r"\.git-credentials|\.kube/config|\.docker/config|_history|/etc/passwd|/etc/shadow)"
)
_SHELL_LEAK = re.compile(
    rf"""(?:https?|ftp)://[^\s'"]{{0,300}}?{_LEAKY_VAR}
    |\s(?:-d|--data(?:-\w+)?|-F|--form|-T|--upload-file|--post-data|--post-file|--body-data|
    --body-file)(?:\s|=)\s?['"]?[^\s'"]{{0,100}}?(?:{_LEAKY_VAR}|@?[^\s'"]{{0,60}}?{_SENSITIVE_PATH})
    |\$\((?:env|printenv|set|cat\s[^)]{{0,100}}?{_SENSITIVE_PATH})|`(?:env|printenv|cat\s[^`]{{0,100}}?
    {_SENSITIVE_PATH})
    |<\s{{0,2}}[^\s]{{0,80}}?{_SENSITIVE_PATH}""",
    re.X,
)
_PIPED_IN = re.compile(
    rf"(?:(?:cat|type|base64|xxd|gzip\s{{1,3}}-c|tar\s{{1,3}}-?c\S*)\s[^\n|]{{0,150}}?{_SENSITIVE_PATH}"
    rf"[^\n|]{{0,60}}|env|printenv)\s{{0,3}}\|\s{{0,3}}\Z"
)


def _shell_exfil(t: _Text, m: re.Match[str]) -> list[Hit]:
    """curl / wget / nc shipping a secret variable or a credentials file somewhere."""
    s, e = m.span()
    if s > 0 and t.low[s - 1] in _ALNUM:
        return []
    while e > s and t.norm[e - 1].isspace():
        e -= 1
    line = t.norm.rfind("\n", 0, s) + 1
    piped = _PIPED_IN.search(t.norm, max(line, s - 220), s)
    if piped is not None:
        return [("shell-exfiltration", piped.start(), e)]
    return [("shell-exfiltration", s, e)] if _SHELL_LEAK.search(t.norm, s, e) else []


_TEMPLATED = re.compile(r"\{[^}]{0,64}\}|\$\{?[A-Za-z_]|%s|\{\{|\[[A-Z_ ]{2,40}\]|%[0-9A-F]{2}")
# A query value that can carry data: not a flag like ?raw=true or a size like &w=200.
_QUERY_VALUE = re.compile(
    r"[?&][^=&#\s]{1,64}=(?!(?:true|false|yes|no|on|off|\d{1,4})(?:[&#)\s]|$))[^&#\s)]",
    re.I,
)


def _image_beacon(t: _Text, m: re.Match[str]) -> list[Hit]:
    """An image whose URL carries a query value or a template: fetching it can ship data."""
    url = m.group("url")
    if _QUERY_VALUE.search(url) or _TEMPLATED.search(url):
        return [("markdown-image-beacon", *m.span())]
    return []
