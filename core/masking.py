"""The one masking policy for personal data and secrets, applied before anything reaches a sink.

Sinks: the audit log (``core.audit``), the interview WAL (``core.interview.wal``), app logs on
stderr (``MaskingFilter``, installed by the CLI and the app), the question-set runs
(``eval/runs/``). The interview store is encrypted at rest instead (``core.interview.sealing``).
README 「個人情報のマスク」 is the table of this module: what is masked, what is kept and why.

All rules live in ``RULES`` (order matters: whole blocks and secrets before generic numbers).
Each rule replaces a match with a typed placeholder such as ``[EMAIL]`` so that logs stay
readable and countable. Numbers are checked before they are masked (Luhn for cards, the check
digit for My Number, the digit count and shape for phones), so that ticket IDs, versions and
CVE numbers stay as they are. Kept on purpose: documentation addresses (RFC 5737 / RFC 3849),
loopback and, unless ``WB_MASK_PRIVATE_IPS``, private ranges (RFC 1918 / RFC 4193), which
operators need to act on an internal host and which name no person.
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

Replace = Callable[[re.Match[str], "MaskPolicy"], str]


@dataclass(frozen=True, slots=True)
class MaskPolicy:
    """The switches of the policy (``Settings.mask_person_names`` / ``mask_private_ips``)."""

    person_names: bool = True
    private_ips: bool = False


@dataclass(frozen=True, slots=True)
class MaskRule:
    name: str
    pattern: re.Pattern[str]
    replace: str | Replace
    # When ``replace`` keeps a match (returns it unchanged), scan again from the end of this
    # group rather than after the whole match: ``ValueError: pw=abc`` still masks ``pw=abc``.
    resume_after: str | None = None


# --- checks ------------------------------------------------------------------------------

_DOC_NETS = [
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
]
_PRIVATE_NETS = [
    ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
]


def _ip_kind(text: str) -> str | None:
    """ "keep-doc", "private", "keep" (loopback, unspecified), "public", or None (not an IP)."""
    text = text.split("/")[0].split("%")[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if any(ip in net for net in _DOC_NETS):
        return "keep-doc"
    if ip.is_loopback or ip.is_unspecified:
        return "keep"
    if any(ip in net for net in _PRIVATE_NETS):
        return "private"
    return "public"


def _mask_ip(match: re.Match[str], policy: MaskPolicy) -> str:
    kind = _ip_kind(match.group(0))
    if kind is None or kind.startswith("keep") or (kind == "private" and not policy.private_ips):
        return match.group(0)
    return "[IP]"


def luhn_ok(digits: str) -> bool:
    """The Luhn checksum of a card number (digits only)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def my_number_ok(digits: str) -> bool:
    """The check digit of a Japanese individual number (12 digits)."""
    if len(digits) != 12:
        return False
    body = [int(c) for c in reversed(digits[:11])]
    total = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(body, start=1))
    rest = total % 11
    return int(digits[11]) == (0 if rest <= 1 else 11 - rest)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _mask_card(match: re.Match[str], policy: MaskPolicy) -> str:
    digits = _digits(match.group(0))
    return "[CARD]" if 13 <= len(digits) <= 19 and luhn_ok(digits) else match.group(0)


def _mask_my_number(match: re.Match[str], policy: MaskPolicy) -> str:
    return "[ID_NUMBER]" if my_number_ok(_digits(match.group(0))) else match.group(0)


def _mask_phone(match: re.Match[str], policy: MaskPolicy) -> str:
    digits = _digits(match.group("number"))
    if digits.startswith("81"):
        digits = "0" + digits[2:]
    if not 10 <= len(digits) <= 11:
        return match.group(0)
    return match.group(0).replace(match.group("number"), "[PHONE]")


_ENGLISH_WEAK_VALUE = re.compile(r"[a-z]+")


def _mask_phrase_secret(match: re.Match[str], policy: MaskPolicy) -> str:
    """``password is X`` / 「パスワードは X」: X is masked when it looks like a password
    (a digit, a symbol or a capital after the first letter), not when it is a plain word."""
    value = match.group("value")
    if _ENGLISH_WEAK_VALUE.fullmatch(value) or (value.istitle() and value.isalpha()):
        return match.group(0)
    return match.group(0)[: match.start("value") - match.start(0)] + "[SECRET]"


_SECRET_NAME_END = None  # compiled below, once _SECRET_NAMES is defined


def _mask_assignment(match: re.Match[str], policy: MaskPolicy) -> str:
    """``name=value`` whose name ends in a secret's name: the value goes, the name stays."""
    if not _SECRET_NAME_END.search(match.group("name")):
        return match.group(0)
    return match.group("name") + match.group("sep") + "[SECRET]"


# Words that end in a name suffix but are not names (お客様, 皆さん, 仕様, 同氏 …).
_NOT_NAMES = (
    "客",
    "皆",
    "仕",
    "同",
    "模",
    "異",
    "多",
    "一",
    "態",
    "有",
    "王",
    "神",
    "各",
    "担当",
    "担当者",
    "利用者",
    "関係者",
    "管理者",
    "運用者",
    "ユーザー",
    "ユーザ",
    "メンバー",
    "オペレーター",
)


def _mask_name(match: re.Match[str], policy: MaskPolicy) -> str:
    name = match.group("name")
    if not policy.person_names or name.endswith(_NOT_NAMES):
        return match.group(0)
    return "[NAME]" + match.group("suffix")


# --- the rules ---------------------------------------------------------------------------

_SECRET_NAMES = (
    r"password|passwd|passphrase|passcode|pwd|pw|secret|secret(?:\\?[_\-])?key|client(?:\\?[_\-])?secret"
    r"|token|auth(?:\\?[_\-])?token|access(?:\\?[_\-])?token|refresh(?:\\?[_\-])?token|api(?:\\?[_\-])?key|apikey"
    r"|access(?:\\?[_\-])?key|account(?:\\?[_\-])?key|private(?:\\?[_\-])?key|credentials?|sig|[a-z0-9]+\\?_key"
    r"|パスワード|暗証番号|パスコード|パスフレーズ"
)

_SECRET_NAME_END = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9_.\-\\]*?)(?:" + _SECRET_NAMES + r")$"
)

RULES: tuple[MaskRule, ...] = (
    # Whole blocks first: a PEM block (private key, certificate) is one secret, whatever it holds.
    MaskRule(
        "pem_block",
        re.compile(r"-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|\Z)"),
        "[PEM]",
    ),
    # API keys and tokens (OpenAI, GitHub, Slack, AWS, Google, JWT, bearer headers)
    MaskRule("openai_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"), "[API_KEY]"),
    MaskRule("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), "[API_KEY]"),
    MaskRule("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), "[API_KEY]"),
    MaskRule("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[API_KEY]"),
    MaskRule("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), "[API_KEY]"),
    MaskRule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*"),
        "[TOKEN]",
    ),
    MaskRule("bearer", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-~+/]{16,}=*"), "Bearer [TOKEN]"),
    # name=value, name: value, "name": "value" (passwords, cloud secrets, connection strings)
    MaskRule(
        "secret_assignment",
        # The separator is found first and the name checked after (``_mask_assignment``): a
        # name pattern tried at every position costs ten times more on long answers.
        re.compile(
            r"(?<![A-Za-z0-9_.\-\\])(?P<name>[A-Za-z0-9_.\-\\]{2,60}|パスワード|暗証番号|パスコード"
            r"|パスフレーズ)(?P<sep>[\"']?\s*[:=：]\s*[\"']?)(?![\[\"'])[^\s,;、。\"'」』]+"
        ),
        lambda m, p: _mask_assignment(m, p),
        resume_after="sep",
    ),
    # Password phrasing: "the password is X", 「パスワードは X」
    MaskRule(
        "secret_phrase",
        re.compile(
            r"(?i)(?:\b(?:password|passphrase|passcode|pw)\s+(?:is|was)\s+"
            r"|(?:パスワード|暗証番号|パスコード|パスフレーズ)\s*(?:は|が)\s*[「『\"']?)"
            r"(?P<value>[!-~]{3,})"
        ),
        _mask_phrase_secret,
    ),
    # Contact data
    MaskRule(  # a Japanese street address: prefecture, city/ward, then a block number
        "jp_address",
        re.compile(
            r"(?:東京都|北海道|(?:京都|大阪)府|[^\s\d、。,()]{2,3}県)[^\s、。,]{1,20}?[市区町村郡]"
            r"[^\s、。,]{0,20}?\d+(?:丁目|番地?|号|[-－ー]\d+)(?:\d+(?:丁目|番地?|号)|[-－ー]\d+)*"
        ),
        "[ADDRESS]",
    ),
    MaskRule(
        "email",
        re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}"),
        "[EMAIL]",
    ),
    MaskRule(  # Japanese phones: separated, with parentheses, +81, or unseparated mobiles
        "phone",
        re.compile(
            r"(?<![A-Za-z0-9_\-+(])(?P<number>"
            r"\+81[\s\-]?\(?\d{1,4}\)?[\s\-]?\d{1,4}[\s\-]?\d{3,4}"
            r"|\(0\d{1,4}\)\s?\d{1,4}[\s\-]?\d{3,4}"
            r"|0\d{1,4}\(\d{1,4}\)\d{3,4}"
            r"|0\d{1,4}[\s\-]\d{1,4}[\s\-]\d{3,4}"
            r"|0[5789]0\d{8}"
            r")(?![A-Za-z0-9_\-])"
            r"|(?i:tel|fax|phone|電話|携帯|ＴＥＬ)[^\d\n]{0,6}(?P<bare>0\d{9,10})(?!\d)"
        ),
        lambda m, p: _mask_phone_any(m, p),
    ),
    MaskRule(  # payment cards: 13-19 digits with spaces or hyphens, Luhn-valid only
        "credit_card",
        re.compile(r"(?<![A-Za-z0-9_\-.])\d(?:[ \-]?\d){12,18}(?![A-Za-z0-9_\-]|\.\d)"),
        _mask_card,
    ),
    MaskRule(  # My Number: 12 digits with a valid check digit
        "my_number",
        re.compile(r"(?<![A-Za-z0-9_\-.])\d{4}[ \-]?\d{4}[ \-]?\d{4}(?![A-Za-z0-9_\-]|\.\d)"),
        _mask_my_number,
    ),
    # IP addresses (IPv6 first: an IPv4-mapped address ends in an IPv4 one)
    MaskRule(
        "ipv6",
        re.compile(
            r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}"
            r"(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?:%[\w.]+)?(?:/\d{1,3})?"
            r"(?![0-9A-Za-z:]|\.\d)"
        ),
        _mask_ip,
    ),
    MaskRule(
        "ipv4",
        re.compile(
            r"(?<![A-Za-z0-9_.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)"
            r"(?:/\d{1,2})?(?![\d.]|\.\d)"
        ),
        _mask_ip,
    ),
    MaskRule(  # personal names with an honorific: 田中様, 佐藤さん, 鈴木氏, タナカくん, Tanaka-san
        "person_name",
        re.compile(
            r"(?P<name>(?<![一-龥々])[一-龥々]{1,5}|(?<![ァ-ヶー])[ァ-ヶー]{2,10}"
            r"|\b[A-Z][a-z]+(?:[ \-][A-Z][a-z]+)?)"
            r"(?P<suffix>様|さま|さん|氏|くん|君|ちゃん|殿|-san|-sama)(?![一-龥])"
        ),
        _mask_name,
    ),
)


def _mask_phone_any(match: re.Match[str], policy: MaskPolicy) -> str:
    if match.group("bare") is not None:  # "TEL 0312345678": the number only
        whole = match.group(0)
        return whole[: match.start("bare") - match.start(0)] + "[PHONE]"
    return _mask_phone(match, policy)


@lru_cache(maxsize=1)
def default_policy() -> MaskPolicy:
    """The process's policy, from the settings (read once)."""
    from core.settings import get_settings

    try:
        settings = get_settings()
    except Exception:  # broken settings must not stop masking: mask the most
        return MaskPolicy(person_names=True, private_ips=True)
    return policy_for(settings)


def policy_for(settings: object) -> MaskPolicy:
    """The policy of a ``Settings`` (``mask_person_names``, ``mask_private_ips``)."""
    return MaskPolicy(
        person_names=bool(getattr(settings, "mask_person_names", True)),
        private_ips=bool(getattr(settings, "mask_private_ips", False)),
    )


def mask_text(text: str, policy: MaskPolicy | None = None) -> str:
    """Mask every rule's matches in ``text``."""
    if not text:
        return text
    policy = policy or default_policy()
    for rule in RULES:
        if isinstance(rule.replace, str):
            text = rule.pattern.sub(rule.replace, text)
        elif rule.resume_after:
            text = _sub_resuming(rule, text, policy)
        else:
            fn = rule.replace
            text = rule.pattern.sub(lambda m, fn=fn: fn(m, policy), text)
    return text


def _sub_resuming(rule: MaskRule, text: str, policy: MaskPolicy) -> str:
    """``re.sub`` where a kept match lets the scan resume inside it (iterative, no recursion)."""
    fn = rule.replace
    assert callable(fn) and rule.resume_after
    out: list[str] = []
    pos = 0
    while (m := rule.pattern.search(text, pos)) is not None:
        replaced = fn(m, policy)
        if replaced != m.group(0):
            out.append(text[pos : m.start()] + replaced)
            pos = m.end()
        else:
            resume = max(m.end(rule.resume_after), m.start() + 1)
            out.append(text[pos:resume])
            pos = resume
    out.append(text[pos:])
    return "".join(out)


def mask_value(value: object, policy: MaskPolicy | None = None) -> object:
    """Mask strings inside nested dicts and lists (keys are kept)."""
    if isinstance(value, str):
        return mask_text(value, policy)
    if isinstance(value, dict):
        return {k: mask_value(v, policy) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v, policy) for v in value]
    return value


class MaskingFilter(logging.Filter):
    """Masks a log record's message (and its traceback text) before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep the raw template, masked
            message = str(record.msg)
        record.msg = mask_text(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_text(record.exc_text)
        return True


def install_log_masking() -> None:
    """Put ``MaskingFilter`` on every handler of the root logger and on ``logging.lastResort``
    (the handler Python uses when none is configured); idempotent."""
    handlers = [*logging.getLogger().handlers]
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for handler in handlers:
        if not any(isinstance(f, MaskingFilter) for f in handler.filters):
            handler.addFilter(MaskingFilter())
