"""Personal data and secrets masking, applied to anything before it reaches a log.

All rules live here, in ``RULES`` (order matters: specific secrets before generic numbers).
Each rule replaces a match with a typed placeholder such as ``[EMAIL]`` so that logs stay
readable and countable. Documentation IP ranges (RFC 5737) are kept: runbooks cite them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MaskRule:
    name: str
    pattern: re.Pattern[str]
    placeholder: str
    keep: Callable[[str], bool] | None = None  # return True to leave a match as it is


_DOC_NETS = [
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
]


def _is_documentation_ip(text: str) -> bool:
    try:
        ip = ipaddress.ip_address(text.split("/")[0])
    except ValueError:
        return False
    return any(ip in net for net in _DOC_NETS)


RULES: tuple[MaskRule, ...] = (
    # API keys and tokens (OpenAI, GitHub, Slack, AWS, Google, JWT, bearer headers, generic key=)
    MaskRule("openai_key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"), "[API_KEY]"),
    MaskRule("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), "[API_KEY]"),
    MaskRule("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"), "[API_KEY]"),
    MaskRule("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[API_KEY]"),
    MaskRule("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), "[API_KEY]"),
    MaskRule(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        "[TOKEN]",
    ),
    MaskRule("bearer", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-~+/]{16,}=*"), "Bearer [TOKEN]"),
    MaskRule(
        "secret_assignment",
        re.compile(
            r"(?i)\b(password|passwd|pwd|secret|api[_-]?key|token|パスワード)(\s*[:=：]\s*)"
            r"(?!\[)[^\s,;、。]{4,}"
        ),
        r"\1\2[SECRET]",
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
    MaskRule(
        "phone",
        re.compile(
            r"(?<![\d\-])(?:\+81[\s\-]?\d{1,4}|0\d{1,4})[\s\-]?\d{1,4}[\s\-]?\d{3,4}(?![\d\-])"
        ),
        "[PHONE]",
    ),
    MaskRule(
        "credit_card",
        re.compile(r"(?<!\d)(?:\d{4}[\s\-]?){3}\d{4}(?!\d)"),
        "[CARD]",
    ),
    MaskRule("my_number", re.compile(r"(?<!\d)\d{4}\s?\d{4}\s?\d{4}(?!\d)"), "[ID_NUMBER]"),
    # Real (non-documentation) IPv4 addresses
    MaskRule(
        "ipv4",
        re.compile(
            r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:/\d{1,2})?(?![\d.])"
        ),
        "[IP]",
        keep=_is_documentation_ip,
    ),
)


def mask_text(text: str) -> str:
    """Mask every rule's matches in ``text``."""
    if not text:
        return text
    for rule in RULES:
        if rule.keep is None:
            text = rule.pattern.sub(rule.placeholder, text)
        else:
            keep = rule.keep
            placeholder = rule.placeholder
            text = rule.pattern.sub(
                lambda m, keep=keep, placeholder=placeholder: (
                    m.group(0) if keep(m.group(0)) else placeholder
                ),
                text,
            )
    return text


def mask_value(value: object) -> object:
    """Mask strings inside nested dicts and lists (keys are kept)."""
    if isinstance(value, str):
        return mask_text(value)
    if isinstance(value, dict):
        return {k: mask_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_value(v) for v in value]
    return value
