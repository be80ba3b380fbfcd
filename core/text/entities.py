"""Rule-based entity extraction for Japanese SOC text (runbooks, questions).

The text is NFKC-normalized first (full-width ASCII becomes ASCII); every rule runs on the
normalized text and ``Entity.surface`` is the matched normalized text. ``Entity.key`` is the
identity used by the graph: NFKC, ASCII lowercased, whitespace collapsed (plus the per-type
canonical forms below). Rules, in priority order — a span claimed by an earlier rule is not
matched again by a later one:

1. ``cve``: ``CVE-YYYY-NNNN+`` (any case, ``-``/``_``/space separators). Key ``cve-2024-3400``.
2. ``ip``: IPv4 with an optional ``/cidr`` (octets validated, not part of a longer dotted
   number); IPv6 in full or ``::``-compressed form, validated by ``ipaddress``. Key is the
   canonical (compressed, lowercase) address.
3. ``event_id``: Windows event IDs (1-65535) right after a label ``イベントID``, ``Event ID``,
   ``EventID``, ``EventCode``, ``EID`` (optionally ``:``/``=``/``は``/``が``/``(``), including
   lists such as ``イベントID 4624/4625、4740``; also ``4625イベント`` / ``4625番イベント``.
   Key is the number without leading zeros.
4. ``command``: ``Verb-Noun`` cmdlets with an approved PowerShell verb (``Get-ADUser``,
   ``Remove-Item``); multi-word heads (``rm -rf``, ``net user``, ``DROP TABLE``,
   ``format C:``, ``reg delete``, ``sc stop``, ``kill -9``, ``dd if=``); known single heads
   (``shutdown``, ``iptables``, ``netsh``, ``vssadmin`` … ``_COMMAND_HEADS``). Key is the
   lowercased head with whitespace collapsed and ``.exe`` dropped (``net user``).
5. ``product``: the curated alias table ``_PRODUCTS`` (products, vendors, tool and technology
   names, with katakana spellings). ASCII aliases match case-insensitively on ASCII word
   boundaries, except the ambiguous all-caps ones (``AD``, ``IDS``, ``IPS`` …) which match
   case-sensitively; katakana aliases must not touch other katakana. Key is the canonical
   name, so aliases unify: ``Azure AD`` -> ``entra id``, ``スプランク`` -> ``splunk``.
6. ``host``: UNC ``\\\\server`` (key ``server``); FQDN-like names (3+ labels with an alphabetic
   last label that is not a file extension, or 2 labels ending in a known TLD such as
   ``example.com``); single-label names with a run of 2+ digits and 2+ letters whose letter
   prefix is not a technical token (``dc01``, ``web-prd-01``, but not ``SHA256``, ``KB5034441``).
7. ``noun``: janome ``名詞`` sequences made of kanji/katakana (a ``接頭詞`` may start one;
   numbers, pronouns, ``非自立`` and ``副詞可能`` nouns break them). Generic words in
   ``_EDGE_STOP_WORDS`` are stripped from both ends (``影響範囲確認`` -> ``影響範囲``); the
   result is kept when it has 2+ words and is not made only of ``_GENERIC_WORDS``
   (``証跡保全``, ``特権アカウント``), or is one katakana word of 3+ characters that is not in
   ``_GENERIC_WORDS`` (``ランサムウェア``). Such katakana words inside a kept compound are also
   entities of their own (``ランサムウェア感染`` gives ``ランサムウェア`` too), so that a
   question naming the word reaches chunks that use it in a compound. Key: a trailing ``ー``
   of katakana words of 4+ characters is dropped (``サーバー`` = ``サーバ``).

``extract_entities`` returns entities distinct by (key, type) in first-occurrence order.
janome dominates the cost; one ``Tokenizer`` is created lazily per thread.
"""

from __future__ import annotations

import ipaddress
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

ENTITY_TYPES = ("cve", "ip", "event_id", "command", "product", "host", "noun")


@dataclass(frozen=True)
class Entity:
    key: str  # normalized identity (NFKC, ASCII lowercase, canonical per type)
    type: str  # one of ENTITY_TYPES
    surface: str  # the matched text (after NFKC)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# --- character classes and boundaries ---------------------------------------------------
_KATAKANA = "ァ-ヺー"
_NOT_AFTER_ASCII = r"(?<![A-Za-z0-9_])"
_NOT_BEFORE_ASCII = r"(?![A-Za-z0-9_])"
_KATAKANA_ONLY = re.compile(rf"[{_KATAKANA}]+")
_JA_NOUN_CHARS = re.compile(rf"[{_KATAKANA}\u4e00-\u9fff\u3005]+")  # katakana, kanji, 々
_HAS_JA = re.compile(rf"[{_KATAKANA}\u4e00-\u9fff]")

# --- 1. CVE -------------------------------------------------------------------------------
_CVE = re.compile(r"(?<![A-Za-z0-9])CVE[-_\s‐‑–]?(\d{4})[-_\s‐‑–](\d{4,7})(?!\d)", re.IGNORECASE)

# --- 2. IP --------------------------------------------------------------------------------
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\d.])(?:{_OCTET}\.){{3}}{_OCTET}(?:/(?:3[0-2]|[12]?\d))?(?![\d]|\.\d)")
_IPV6_CANDIDATE = re.compile(r"(?<![0-9A-Za-z:])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*(?:/\d{1,3})?")

# --- 3. Windows event IDs -----------------------------------------------------------------
_EVENT_LABEL = r"(?:イベント\s*ID|イベント\s*コード|event\s*id|event\s*code|EID)"
_EVENT_NUMBER_LIST = r"\d{1,5}(?:\s*(?:[/,、・]|および|及び|や|と|or|and)\s*\d{1,5})*"
_EVENT_AFTER_LABEL = re.compile(
    rf"{_EVENT_LABEL}\s*(?:[:=]|は|が|の|\()?\s*({_EVENT_NUMBER_LIST})(?!\d)", re.IGNORECASE
)
_EVENT_BEFORE_LABEL = re.compile(r"(?<![\d.])(\d{3,5})\s*番?\s*イベント(?!\s*ID)")
_DIGITS = re.compile(r"\d+")

# --- 4. commands --------------------------------------------------------------------------
_CMDLET_VERBS = _words(
    "Add Approve Assert Backup Block Checkpoint Clear Close Compare Complete Compress Confirm "
    "Connect Convert ConvertFrom ConvertTo Copy Debug Deny Deploy Disable Disconnect Dismount "
    "Edit Enable Enter Exit Expand Export Find Format Get Grant Group Hide Import Initialize "
    "Install Invoke Join Limit Lock Measure Merge Mount Move New Open Optimize Out Pop Protect "
    "Publish Push Read Receive Register Remove Rename Repair Request Reset Resize Resolve Restart "
    "Restore Resume Revoke Save Search Select Send Set Show Skip Split Start Step Stop Submit "
    "Suspend Switch Sync Test Trace Unblock Undo Uninstall Unlock Unprotect Unpublish Unregister "
    "Update Use Wait Watch Write"
)
_CMDLET = re.compile(
    r"(?<![A-Za-z0-9_\-])(?:"
    + "|".join(_CMDLET_VERBS)
    + r")-[A-Za-z][A-Za-z0-9]+(?![A-Za-z0-9_\-])",
    re.IGNORECASE,
)
_CMDLET_NOUN_STOP = frozenset({"up", "in", "out", "on", "off", "by", "to", "based", "level"})
_COMMAND_PHRASES = (
    r"rm\s+-[A-Za-z]+",
    r"net\s+(?:user|group|localgroup|use|share|session|stop|start|accounts|view)",
    r"(?:drop|truncate)\s+(?:table|database|schema)",
    r"delete\s+from",
    r"alter\s+user",
    r"format\s+[A-Za-z]:",
    r"reg(?:\.exe)?\s+(?:add|delete|query|export|import|save)",
    r"sc(?:\.exe)?\s+(?:stop|start|delete|config|create|query)",
    r"kill\s+-(?:\d+|[A-Z]+)",
    r"dd\s+if=",
)
_COMMAND_HEADS = _words(
    "shutdown iptables ip6tables nft ufw firewall-cmd netsh schtasks taskkill tasklist wevtutil "
    "vssadmin bcdedit wbadmin wmic certutil bitsadmin powershell pwsh cmd psexec icacls takeown "
    "gpupdate gpresult klist setspn nltest dsquery auditpol whoami ipconfig ifconfig netstat "
    "nslookup tracert traceroute tcpdump systemctl journalctl useradd userdel usermod passwd "
    "crontab sudo chmod chown mkfs robocopy sdelete fsutil diskpart quser logoff runas mstsc "
    "rundll32 regsvr32 mshta cscript wscript curl wget ssh scp"
)
_COMMAND = re.compile(
    r"(?<![A-Za-z0-9_\-./\\])(?:"
    + "|".join(_COMMAND_PHRASES)
    + r"|(?:"
    + "|".join(re.escape(h) for h in sorted(_COMMAND_HEADS, key=len, reverse=True))
    + r")(?:\.exe)?)(?![A-Za-z0-9_\-])",
    re.IGNORECASE,
)

# --- 5. products --------------------------------------------------------------------------
# canonical name: aliases (the canonical name itself is always an alias)
_PRODUCTS: dict[str, tuple[str, ...]] = {
    "Microsoft Defender for Endpoint": (
        "Defender for Endpoint",
        "MDE",
        "Microsoft Defender ATP",
        "Windows Defender ATP",
    ),
    "Microsoft Defender for Office 365": ("Defender for Office 365",),
    "Microsoft Defender for Identity": ("Defender for Identity", "MDI"),
    "Microsoft Defender": ("Windows Defender", "Defender", "ディフェンダー"),
    "Microsoft Sentinel": ("Azure Sentinel", "Sentinel", "センチネル"),
    "Microsoft Intune": ("Intune", "インチューン"),
    "Microsoft Purview": ("Purview",),
    "Microsoft 365": ("M365", "Office 365", "Office365", "O365"),
    "Exchange Online": ("EXO",),
    "Exchange Server": ("Microsoft Exchange", "Exchange", "エクスチェンジ"),
    "SharePoint": ("SharePoint Online", "シェアポイント"),
    "OneDrive": ("OneDrive for Business", "ワンドライブ"),
    "Teams": ("Microsoft Teams", "チームズ"),
    "Outlook": ("アウトルック",),
    "Entra ID": (
        "Microsoft Entra ID",
        "Azure AD",
        "Azure Active Directory",
        "AAD",
        "Entra",
    ),
    "Active Directory": ("AD", "AD DS", "アクティブディレクトリ", "アクティブ・ディレクトリ"),
    "Windows Server": ("ウィンドウズサーバー", "ウィンドウズサーバ"),
    "Windows": ("ウィンドウズ",),
    "Linux": ("リナックス",),
    "Ubuntu": ("ウブントゥ",),
    "Red Hat Enterprise Linux": ("RHEL",),
    "macOS": ("Mac OS",),
    "BitLocker": ("ビットロッカー",),
    "Sysmon": ("System Monitor",),
    "CrowdStrike Falcon": ("CrowdStrike", "クラウドストライク"),
    "SentinelOne": ("Sentinel One", "センチネルワン"),
    "Carbon Black": ("VMware Carbon Black",),
    "Cortex XDR": (),
    "Trend Micro": ("トレンドマイクロ", "Apex One", "Deep Security", "Vision One"),
    "Trellix": ("McAfee", "マカフィー"),
    "Symantec": ("シマンテック",),
    "Sophos": ("ソフォス",),
    "Splunk": ("Splunk Enterprise Security", "スプランク"),
    "QRadar": ("IBM QRadar",),
    "Elastic": ("Elasticsearch", "Elastic Security", "Kibana", "エラスティック"),
    "FortiGate": ("Fortinet", "FortiOS", "フォーティゲート", "フォーティネット"),
    "Palo Alto Networks": ("Palo Alto", "PAN-OS", "パロアルト"),
    "Cisco": ("Cisco ASA", "シスコ"),
    "Zscaler": ("ゼットスケーラー",),
    "Okta": ("オクタ",),
    "Proofpoint": ("プルーフポイント",),
    "Ivanti": ("Pulse Secure", "Ivanti Connect Secure"),
    "Citrix": ("NetScaler", "シトリックス"),
    "VMware": ("ESXi", "vCenter", "vSphere"),
    "Hyper-V": (),
    "Veeam": ("Veeam Backup & Replication", "ヴィーム"),
    "AWS": ("Amazon Web Services",),
    "AWS CloudTrail": ("CloudTrail",),
    "Amazon GuardDuty": ("GuardDuty",),
    "Microsoft Azure": ("Azure", "アジュール"),
    "Google Cloud": ("GCP", "Google Cloud Platform"),
    "Google Workspace": ("G Suite",),
    "ServiceNow": ("サービスナウ",),
    "VirusTotal": (),
    "Wireshark": ("ワイヤーシャーク",),
    "Nmap": (),
    "Mimikatz": (),
    "Cobalt Strike": ("CobaltStrike",),
    "VPN": (),
    "EDR": (),
    "XDR": (),
    "NDR": (),
    "SIEM": (),
    "SOAR": (),
    "WAF": (),
    "UTM": (),
    "IDS": (),
    "IPS": (),
    "DLP": (),
}
# all-caps aliases that are ordinary words or plurals in another case ("ad", "IPs")
_CASE_SENSITIVE_ALIASES = frozenset(
    {"AD", "AD DS", "AAD", "MDE", "MDI", "EXO", "IDS", "IPS", "UTM", "NDR", "DLP", "WAF", "RHEL"}
)


def _alias_lookup_key(text: str) -> str:
    return re.sub(r"[\s・]+", "", text).lower()


def _build_product_regexes() -> tuple[re.Pattern[str], re.Pattern[str], dict[str, str]]:
    """One regex for ASCII aliases, one for katakana aliases (longest alternative first)."""
    lookup: dict[str, str] = {}
    ascii_pieces: list[str] = []
    katakana_pieces: list[str] = []
    for canonical, aliases in _PRODUCTS.items():
        for alias in (canonical, *aliases):
            lookup[_alias_lookup_key(alias)] = canonical.lower()
            body = r"[\s・]*".join(re.escape(part) for part in re.split(r"[\s・]+", alias))
            if alias.isascii():
                ascii_pieces.append(f"(?-i:{body})" if alias in _CASE_SENSITIVE_ALIASES else body)
            else:
                katakana_pieces.append(body)
    ascii_pieces.sort(key=len, reverse=True)
    katakana_pieces.sort(key=len, reverse=True)
    ascii_regex = re.compile(
        rf"{_NOT_AFTER_ASCII}(?:{'|'.join(ascii_pieces)}){_NOT_BEFORE_ASCII}", re.IGNORECASE
    )
    katakana_regex = re.compile(
        rf"(?<![{_KATAKANA}])(?:{'|'.join(katakana_pieces)})ー?(?![{_KATAKANA}])"
    )
    return ascii_regex, katakana_regex, lookup


_PRODUCT_ASCII, _PRODUCT_KATAKANA, _PRODUCT_LOOKUP = _build_product_regexes()

# --- 6. hosts -----------------------------------------------------------------------------
_UNC = re.compile(r"\\\\([A-Za-z0-9][A-Za-z0-9.\-]*[A-Za-z0-9]|[A-Za-z0-9])")
_FQDN = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?:[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
    r"(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"
)
_SHORT_HOST = re.compile(
    r"(?<![A-Za-z0-9_.\-\\])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![A-Za-z0-9_\-]|\.[A-Za-z0-9])"
)
_FILE_EXTENSIONS = frozenset(
    _words(
        "exe dll sys ps1 psm1 bat cmd vbs js hta lnk msi scr py sh pl rb jar war php asp aspx jsp "
        "pdf txt log csv tsv json yaml yml xml md html htm docx doc xlsx xls pptx ppt zip rar gz tgz "
        "7z tar iso img vhd vhdx evtx etl pst ost msg eml conf cfg ini reg tmp dat bak db sqlite sql "
        "jpg jpeg png gif svg bmp ico mp4 mp3 wav key pem crt cer pfx p12 der pcap pcapng"
    )
)
_KNOWN_TLDS = frozenset(
    _words(
        "com net org jp io co info biz gov edu mil int local lan corp internal intra home example "
        "test invalid localhost onion ru cn kr uk de fr us eu xyz top app dev cloud site online "
        "tk ml ga cf gq ne or ac go ad ed lg gr"
    )
)
_HOST_STOP_PREFIXES = frozenset(
    _words(
        "sha aes rsa des md rc win windows office server exchange sql outlook base utf tls ssl rfc "
        "iso nist cis pci ipv http https cve ms kb ver version id event evt eid ec ta apt fin unc "
        "tcp udp port vlan jis cp ie ios android ubuntu centos rhel debian fy no amd arm covid "
        "step phase page fig table mitre att"
    )
)
_LETTER_PREFIX = re.compile(r"[A-Za-z]+")

# --- 7. nouns -----------------------------------------------------------------------------
_EDGE_STOP_WORDS = frozenset(
    _words(
        "場合 必要 確認 実施 実行 使用 利用 可能 以下 以上 等 方法 状況 有無 結果 内容 一覧 際 時 後 前 "
        "中 用 各 全 本 同 当 他 旨 件 点 上 下 内 外 間 毎 ため 為 こと 事 もの 物 よう 様"
    )
)
_GENERIC_WORDS = _EDGE_STOP_WORDS | frozenset(
    _words(
        "対応 手順 作業 対象 情報 問題 事象 発生 操作 設定 変更 追加 削除 管理 担当 連絡 報告 記録 "
        "無効 有効 化 性 的 者 数 名 量 度 部 課 アカウント アクセス サーバ サーバー ユーザ ユーザー "
        "ファイル フォルダ フォルダー システム データ ネットワーク サービス ツール コマンド メール "
        "レベル チーム ルール グループ ポリシー プロセス イベント ログ セキュリティ インシデント "
        "アラート ケース パターン タイプ リスト ステップ フェーズ チェック ポイント バージョン "
        "ページ テスト モード オプション リセット ログイン ログアウト ダウンロード アップロード "
        "インストール アップデート クリック コピー メモ"
    )
)
_NOUN_BREAK_SUBTYPES = frozenset({"数", "代名詞", "非自立", "副詞可能", "特殊", "接続詞的"})

_local = threading.local()


def _janome():  # -> janome.tokenizer.Tokenizer (one per thread, created lazily)
    tok = getattr(_local, "tokenizer", None)
    if tok is None:
        from janome.tokenizer import Tokenizer

        tok = Tokenizer()
        _local.tokenizer = tok
    return tok


# --- helpers ------------------------------------------------------------------------------
def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _Claims:
    """Character spans already taken by a higher-priority rule."""

    def __init__(self, length: int) -> None:
        self.taken = bytearray(length)

    def free(self, start: int, end: int) -> bool:
        return not any(self.taken[start:end])

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)


def _cves(text: str) -> Iterator[tuple[int, int, Entity]]:
    for m in _CVE.finditer(text):
        yield m.start(), m.end(), Entity(f"cve-{m[1]}-{m[2]}", "cve", m[0])


def _ips(text: str) -> Iterator[tuple[int, int, Entity]]:
    for m in _IPV4.finditer(text):
        yield m.start(), m.end(), Entity(m[0], "ip", m[0])
    for m in _IPV6_CANDIDATE.finditer(text):
        candidate = m[0]
        if candidate.count(":") < 2 or not re.search(r"[0-9A-Fa-f]", candidate):
            continue
        try:
            if "/" in candidate:
                key = str(ipaddress.IPv6Interface(candidate)).lower()
            else:
                key = ipaddress.IPv6Address(candidate).compressed.lower()
        except ValueError:
            continue
        yield m.start(), m.end(), Entity(key, "ip", candidate)


def _event_ids(text: str) -> Iterator[tuple[int, int, Entity]]:
    for m in _EVENT_BEFORE_LABEL.finditer(text):
        value = int(m[1])
        if 0 < value <= 65535:
            yield m.start(), m.end(), Entity(str(value), "event_id", m[1])
    # the label is claimed with the first number so that it does not become a noun
    for m in _EVENT_AFTER_LABEL.finditer(text):
        base, claim_from = m.start(1), m.start()
        for d in _DIGITS.finditer(m[1]):
            value = int(d[0])
            if 0 < value <= 65535:
                yield claim_from, base + d.end(), Entity(str(value), "event_id", d[0])
            claim_from = base + d.end()


def _commands(text: str) -> Iterator[tuple[int, int, Entity]]:
    for m in _CMDLET.finditer(text):
        if m[0].split("-", 1)[1].lower() in _CMDLET_NOUN_STOP:
            continue
        yield m.start(), m.end(), Entity(m[0].lower(), "command", m[0])
    for m in _COMMAND.finditer(text):
        key = _collapse(m[0].lower())
        key = re.sub(r"\.exe\b", "", key)
        yield m.start(), m.end(), Entity(key, "command", m[0])


def _products(text: str) -> Iterator[tuple[int, int, Entity]]:
    for regex in (_PRODUCT_ASCII, _PRODUCT_KATAKANA):
        for m in regex.finditer(text):
            found = _alias_lookup_key(m[0])
            key = _PRODUCT_LOOKUP.get(found) or _PRODUCT_LOOKUP.get(found.rstrip("ー"))
            if key is not None:
                yield m.start(), m.end(), Entity(key, "product", m[0])


def _short_host_ok(name: str) -> bool:
    if not re.search(r"\d{2,}", name) or sum(c.isalpha() for c in name) < 2:
        return False
    prefix = _LETTER_PREFIX.match(name)
    return prefix is not None and prefix[0].lower() not in _HOST_STOP_PREFIXES


def _hosts(text: str) -> Iterator[tuple[int, int, Entity]]:
    for m in _UNC.finditer(text):
        yield m.start(), m.end(), Entity(m[1].lower(), "host", m[0])
    for m in _FQDN.finditer(text):
        labels = m[0].lower().split(".")
        tld = labels[-1]
        if tld in _FILE_EXTENSIONS:
            continue
        if len(labels) == 2 and tld not in _KNOWN_TLDS:
            continue
        yield m.start(), m.end(), Entity(m[0].lower(), "host", m[0])
    for m in _SHORT_HOST.finditer(text):
        if _short_host_ok(m[0]):
            yield m.start(), m.end(), Entity(m[0].lower(), "host", m[0])


def _noun_key(words: list[str]) -> str:
    parts = []
    for w in words:
        if len(w) >= 4 and w.endswith("ー") and _KATAKANA_ONLY.fullmatch(w):
            w = w[:-1]
        parts.append(w)
    return "".join(parts)


def _keep_compound(words: list[str]) -> tuple[int, int] | None:
    """Strip edge stop words; return the [lo, hi) words to keep, or None to drop the compound."""
    lo, hi = 0, len(words)
    while lo < hi and words[lo] in _EDGE_STOP_WORDS:
        lo += 1
    while hi > lo and words[hi - 1] in _EDGE_STOP_WORDS:
        hi -= 1
    kept = words[lo:hi]
    if not kept:
        return None
    if len(kept) == 1:
        w = kept[0]
        if len(w) >= 3 and _KATAKANA_ONLY.fullmatch(w) and _noun_key([w]) not in _GENERIC_WORDS:
            return lo, hi
        return None
    if all(w in _GENERIC_WORDS or _noun_key([w]) in _GENERIC_WORDS for w in kept):
        return None
    return lo, hi


def _katakana_parts(
    words: list[tuple[int, str, str]], compound: str
) -> Iterator[tuple[int, int, Entity]]:
    """Katakana words inside a compound: maximal katakana runs (janome splits unknown words,
    マル|ウェア) and single katakana words of 4+ characters (アカウント|ロックアウト)."""
    parts: list[tuple[int, str]] = []
    run_start, run_text = -1, ""
    for start, word, _ in [*words, (-1, "", "")]:
        if word and _KATAKANA_ONLY.fullmatch(word):
            if len(word) >= 4:
                parts.append((start, word))
            run_start, run_text = (run_start, run_text + word) if run_text else (start, word)
            continue
        if run_text:
            parts.append((run_start, run_text))
        run_start, run_text = -1, ""
    for start, word in sorted(set(parts)):
        if word != compound and _keep_compound([word]) is not None:
            yield start, start + len(word), Entity(_noun_key([word]), "noun", word)


def _tokens(text: str) -> Iterator[tuple[int, str, list[str]]]:
    """(offset, surface, POS tags) of janome tokens; lines without kanji/katakana are skipped."""
    tokenizer = _janome()
    offset = 0
    for line in text.splitlines(keepends=True):
        if _HAS_JA.search(line):
            pos = offset
            for token in tokenizer.tokenize(line):
                yield pos, token.surface, token.part_of_speech.split(",")
                pos += len(token.surface)
            yield pos, "\n", ["記号", "改行", "*", "*"]  # a line end breaks every compound
        offset += len(line)


def _nouns(text: str, claims: _Claims) -> Iterator[tuple[int, int, Entity]]:
    if not _HAS_JA.search(text):
        return
    run: list[tuple[int, str, str]] = []  # (start, surface, pos subtype) of the current compound

    def flush() -> Iterator[tuple[int, int, Entity]]:
        while run and run[-1][2] == "接頭詞":  # a compound does not end with a prefix
            run.pop()
        span = _keep_compound([w for _, w, _ in run]) if run else None
        if span is not None:
            lo, hi = span
            words = [w for _, w, _ in run[lo:hi]]
            start = run[lo][0]
            surface = "".join(words)
            yield start, start + len(surface), Entity(_noun_key(words), "noun", surface)
            if len(words) > 1:
                yield from _katakana_parts(run[lo:hi], surface)
        run.clear()

    for start, surface, tags in _tokens(text):
        pos = start + len(surface)
        usable = bool(_JA_NOUN_CHARS.fullmatch(surface)) and claims.free(start, pos)
        if (
            usable
            and tags[0] == "名詞"
            and tags[1] not in _NOUN_BREAK_SUBTYPES
            and tags[2] != "副詞可能"
        ):
            if tags[1] != "接尾" or run:  # a suffix cannot start a compound
                run.append((start, surface, tags[1]))
            continue
        yield from flush()
        if usable and tags[0] == "接頭詞" and tags[1] == "名詞接続":
            run.append((start, surface, "接頭詞"))
    yield from flush()


# --- public API ---------------------------------------------------------------------------
_PATTERN_RULES = (_cves, _ips, _event_ids, _commands, _products, _hosts)


def extract_entities(text: str) -> list[Entity]:
    """Entities of ``text`` by the module's rules, distinct by (key, type), first occurrence first."""
    if not text:
        return []
    norm = unicodedata.normalize("NFKC", text)
    claims = _Claims(len(norm))
    found: list[tuple[int, int, Entity]] = []
    for rule in _PATTERN_RULES:
        for start, end, entity in rule(norm):
            if claims.free(start, end):
                claims.take(start, end)
                found.append((start, end, entity))
    found.extend(_nouns(norm, claims))
    found.sort(key=lambda f: f[0])
    seen: set[tuple[str, str]] = set()
    out: list[Entity] = []
    for _, _, entity in found:
        ident = (entity.key, entity.type)
        if ident not in seen:
            seen.add(ident)
            out.append(entity)
    return out


def extract_query_entities(text: str) -> list[Entity]:
    """Entities of a question: the same rules as indexing, so keys match the graph."""
    return extract_entities(text)


__all__ = ["ENTITY_TYPES", "Entity", "extract_entities", "extract_query_entities"]
