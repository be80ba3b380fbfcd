"""Text-like values: URLs and references, owners, success criteria, commands, heat."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from core.interview.normalizers.base import normalize

# --- URLs and references -------------------------------------------------------------------

_URL_RE = re.compile(r"https?://[^\s<>\"'「」『』()\[\]{}、。,，]+", re.IGNORECASE)
_URL_TRAIL = ".,;:!?)]}'\"。、"
_DEFAULT_PORTS = {"http": "80", "https": "443"}


def normalize_url(url: str) -> str:
    """Lower-case scheme and host, drop the default port and an empty trailing ``/``.
    Idempotent: ``normalize_url(normalize_url(u)) == normalize_url(u)``."""
    url = url.strip().rstrip(_URL_TRAIL)
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    netloc = host
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    if port is not None and str(port) != _DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{port}"
    path = parts.path if parts.path not in ("", "/") else ""
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


def parse_urls(text: str) -> list[str]:
    """URLs in order, normalized and de-duplicated; Japanese punctuation around them is dropped."""
    s = normalize(text)
    seen: dict[str, None] = {}
    for m in _URL_RE.finditer(s):
        raw = m.group().rstrip(_URL_TRAIL)
        if "://" in raw and len(raw) > len(raw.split("://", 1)[0]) + 3:
            seen.setdefault(normalize_url(raw), None)
    return list(seen)


_REF_RE = re.compile(
    r"(?:PR|MR|pull request|プルリク(?:エスト)?|issue|Issue|チケット|ticket)\s?#?\s?\d+"
    r"|(?<![\w/])#\d{1,6}(?!\d)"
    r"|(?<![A-Za-z0-9])[A-Z][A-Z0-9]{1,9}-\d{1,6}(?!\d)"
)


def parse_refs(text: str) -> list[str]:
    """URLs plus PR / issue / ticket references (``PR #42``, ``#128``, ``SOC-231``)."""
    s = normalize(text)
    refs = parse_urls(s)
    without_urls = _URL_RE.sub(" ", s)
    for m in _REF_RE.finditer(without_urls):
        ref = m.group().strip()
        if re.fullmatch(r"(?:CVE|RFC|ISO|JIS|UTF|SHA|TLS|AES)-\d+", ref):
            continue
        if ref not in refs:
            refs.append(ref)
    return refs


# --- owners --------------------------------------------------------------------------------

_NAME = r"[^\s、,。()\[\]「」:：・/]{1,20}?"
_OWNER_LABELLED = re.compile(
    r"(?:担当者?|オーナー|責任者|owner|assignee|担当部署)\s*(?:は|:|=)\s*"
    r"(?P<name>[^\s、,。()\[\]「」]{1,20}?)(?:さん|氏|様)?(?=$|[\s、,。()\[\]」]|です|で|が|に)",
    re.IGNORECASE,
)
_OWNER_SUFFIX = re.compile(
    rf"(?P<name>{_NAME})(?P<suffix>担当|チーム|さん|氏|部門|部|課|グループ|班|team(?![A-Za-z]))"
)
_OWNER_NOT = {"各", "全", "前", "後", "同", "本", "当", "別", "全員", "みな", "皆", "一", "今"}


def find_owner(text: str) -> tuple[str, int, int] | None:
    """The owner and the span (in the normalized text) of the words naming it."""
    s = normalize(text)
    m = _OWNER_LABELLED.search(s)
    if m:
        return m.group("name"), m.start(), m.end()
    for m in _OWNER_SUFFIX.finditer(s):
        raw = m.group("name")
        name = raw.lstrip("はがをにでとの")
        suffix = m.group("suffix")
        if not name or name in _OWNER_NOT or re.fullmatch(r"[\d.]+", name):
            continue
        start = m.start() + (len(raw) - len(name))
        if suffix in ("担当", "さん", "氏"):
            return name, start, m.end()
        return name + suffix, start, m.end()
    return None


def parse_owner(text: str) -> str | None:
    """The owner of an action: ``担当: 田中`` / ``SRE担当`` / ``田中さん`` / ``インフラチーム``."""
    found = find_owner(text)
    return found[0] if found else None


# --- success criteria ----------------------------------------------------------------------

_CRITERIA = (
    re.compile(
        r"[^\s、,。()]{0,20}?\s?(?:<=|>=|≦|≧|≤|≥|<|>|=)\s?\d+(?:\.\d+)?\s?"
        r"(?:%|件|分|秒|ms|時間|回|日)?"
    ),
    re.compile(
        r"[^\s、,。()]{0,20}?\d+(?:\.\d+)?\s?(?:%|件|分|秒|ms|時間|回|日)?\s?"
        r"(?:以下|未満|以上|以内|を超え)"
    ),
    re.compile(r"(?:成功基準|合格基準|達成基準|完了条件|KPI|目標)\s?(?:は|:)\s?[^。\n]+"),
    re.compile(r"[^\s、,。()]{1,30}?(?:がゼロ|を0件|が0件|ゼロ件|が発生しない|が再発しない)"),
    re.compile(r"[^。、,\n]{2,40}?(?:ば|なら|で)(?:合格|成功|OK|完了)"),
    re.compile(
        r"[^。、,\n]{2,40}?(?:されること|できること|であること|となること|になること|"
        r"表示され(?:る|れば)|が返る|が返ってくる|ばOK|ならOK|なら成功|ば成功|ば完了|"
        r"で成功|が通る|に成功する|が正常|が復旧|が解消|確認できれば|確認できる)"
    ),
)


def find_criterion(text: str) -> tuple[str, int, int] | None:
    s = normalize(text)
    for pattern in _CRITERIA:
        m = pattern.search(s)
        if m:
            value = m.group().strip(" 、,。()")
            if value:
                start = s.find(value, m.start())
                return value, start, start + len(value)
    return None


def parse_criterion(text: str) -> str | None:
    """A success / pass criterion: ``失敗率<1%``, ``エラー率 0.1%以下``, ``ログインできること``."""
    found = find_criterion(text)
    return found[0] if found else None


# --- commands and heat ---------------------------------------------------------------------

_COMMAND_RE = re.compile(
    r"`(?P<tick>[^`]+)`"
    r"|(?:^|\s)\$\s(?P<shell>[^\n、。]+)"
    r"|(?P<bare>\b(?:sudo|systemctl|kubectl|docker|curl|netsh|ipconfig|aws|az|gcloud|git|ssh|"
    r"grep|tail|Get-\w+|Set-\w+|Restart-\w+|Stop-\w+|Start-\w+|Invoke-\w+|Disable-\w+|"
    r"Enable-\w+)\b(?:\s+[-\w./=:\"']+){0,6})"
)


def find_command(text: str) -> tuple[str, int, int] | None:
    s = normalize(text)
    m = _COMMAND_RE.search(s)
    if not m:
        return None
    name = "tick" if m.group("tick") else "shell" if m.group("shell") else "bare"
    return m.group(name).strip(), m.start(name), m.end(name)


def parse_command(text: str) -> str | None:
    found = find_command(text)
    return found[0] if found else None


_HEAT_RE = re.compile(r"中強火|中弱火|弱中火|強火|中火|弱火|とろ火|余熱|予熱|\d+\s?W(?![A-Za-z])")


def parse_heat(text: str) -> str | None:
    m = _HEAT_RE.search(normalize(text))
    return m.group() if m else None
