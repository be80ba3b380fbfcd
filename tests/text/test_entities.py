"""Rule-based entity extraction on Japanese SOC sentences (real janome)."""

from __future__ import annotations

import threading

import pytest

from core.text.entities import ENTITY_TYPES, Entity, extract_entities, extract_query_entities


def keys(text: str, type_: str) -> list[str]:
    return [e.key for e in extract_entities(text) if e.type == type_]


# (sentence, type, expected keys of that type in order) -- exact lists: positives and negatives
CASES = [
    # cve
    ("CVE-2024-3400 の悪用を確認した。", "cve", ["cve-2024-3400"]),
    (
        "ｃｖｅ－２０２３－４４４８７ と cve_2021_44228 に対応する。",
        "cve",
        ["cve-2023-44487", "cve-2021-44228"],
    ),
    ("CVE-24-1 や CVSS 9.8 は対象外。", "cve", []),
    # ip
    ("送信元 203.0.113.5 と 10.0.0.0/8 を遮断する。", "ip", ["203.0.113.5", "10.0.0.0/8"]),
    ("fe80::1 と 2001:DB8:0:0:0:0:0:1 からの通信。", "ip", ["fe80::1", "2001:db8::1"]),
    ("バージョン 1.2.3.4.5 と 999.1.1.1、10:30 と 12:30:45 に発生。", "ip", []),
    # event_id
    ("イベントID 4625 が多発している。", "event_id", ["4625"]),
    (
        "イベントＩＤ：4624/4625、4740 と 4720 番イベントを確認。",
        "event_id",
        ["4624", "4625", "4740", "4720"],
    ),
    ("Splunk で EventCode=4625 OR EventCode=4624 を検索する。", "event_id", ["4625", "4624"]),
    ("4625 件のログオン失敗とポート 4444 への通信。", "event_id", []),
    # command
    (
        "Get-ADUser で確認し、Disable-ADAccount で無効化する。",
        "command",
        ["get-aduser", "disable-adaccount"],
    ),
    (
        "rm -rf / や DROP TABLE users; や format C: は実行しない。",
        "command",
        ["rm -rf", "drop table", "format c:"],
    ),
    (
        "net user administrator /active:no を実行し shutdown /r /t 0 する。",
        "command",
        ["net user", "shutdown"],
    ),
    (
        "netsh advfirewall と iptables -A INPUT、vssadmin delete shadows、cmd.exe。",
        "command",
        ["netsh", "iptables", "vssadmin", "cmd"],
    ),
    (
        "Remove-Item と Stop-Process を使う。set-up や Sign-In は対象外。",
        "command",
        ["remove-item", "stop-process"],
    ),
    ("ネットワークを遮断した後にフォーマットする。", "command", []),
    # product
    (
        "Microsoft Defender for Endpoint で端末を隔離する。",
        "product",
        ["microsoft defender for endpoint"],
    ),
    (
        "Azure AD と Entra ID と Active Directory の ADアカウント。",
        "product",
        ["entra id", "active directory"],
    ),
    (
        "CrowdStrike Falcon、Splunk、スプランク、FortiGate、フォーティゲート。",
        "product",
        ["crowdstrike falcon", "splunk", "fortigate"],
    ),
    (
        "EDR と SIEM、VPN接続、Exchange Online、M365、AWS、Veeam、Linux。",
        "product",
        ["edr", "siem", "vpn", "exchange online", "microsoft 365", "aws", "veeam", "linux"],
    ),
    (
        "Windows Server 2019 と パロアルト の PAN-OS。",
        "product",
        ["windows server", "palo alto networks"],
    ),
    ("サンフランシスコの広告(ad)で IPs が変わった。", "product", []),
    # host
    (
        "fs01.corp.example と DC02.corp.example.co.jp を調査する。",
        "host",
        ["fs01.corp.example", "dc02.corp.example.co.jp"],
    ),
    ("dc01 と web-prd-01 と \\\\FS01\\share を確認。", "host", ["dc01", "web-prd-01", "fs01"]),
    ("phish.example.com からのメール。", "host", ["phish.example.com"]),
    ("SHA256 と KB5034441 と APT29 と report.pdf と cmd.exe と T1059 と Windows10。", "host", []),
    # noun
    (
        "ランサムウェア感染時はフィッシングメールの証跡保全を行い、特権アカウントの影響範囲を確認する。",
        "noun",
        [
            "ランサムウェア感染",
            "ランサムウェア",
            "フィッシングメール",
            "証跡保全",
            "特権アカウント",
            "影響範囲",
        ],
    ),
    ("不正アクセスの初動対応手順。", "noun", ["不正アクセス", "初動対応手順"]),
    ("必要な場合は確認を実施し、対応する。", "noun", []),
    ("サーバーのユーザーのアカウントとログ。", "noun", []),
    ("影響範囲確認と確認手順。", "noun", ["影響範囲"]),
    ("マルウェア感染端末を隔離する。", "noun", ["マルウェア感染端末", "マルウェア"]),
]


@pytest.mark.parametrize(("text", "type_", "expected"), CASES)
def test_rules(text: str, type_: str, expected: list[str]) -> None:
    assert keys(text, type_) == expected


def test_entity_fields_and_types() -> None:
    found = extract_entities("CVE-2024-3400 を fs01.corp.example で確認。")
    assert found[0] == Entity("cve-2024-3400", "cve", "CVE-2024-3400")
    assert found[1] == Entity("fs01.corp.example", "host", "fs01.corp.example")
    text = "Get-ADUser 10.0.0.1 CVE-2020-0001 イベントID 4740 dc01 Splunk 証跡保全"
    assert {e.type for e in extract_entities(text)} == set(ENTITY_TYPES)


def test_distinct_in_first_occurrence_order() -> None:
    text = "スプランクで 10.0.0.1 を検索し、Splunk で再度 10.0.0.1 を確認。証跡保全と証跡保全。"
    found = extract_entities(text)
    assert [(e.type, e.key) for e in found] == [
        ("product", "splunk"),
        ("ip", "10.0.0.1"),
        ("noun", "証跡保全"),
    ]
    assert found[0].surface == "スプランク"  # the first occurrence's surface


def test_same_key_of_two_types_is_two_entities() -> None:
    # "ADアカウント" gives the product; a host called ad01 is a different entity
    found = extract_entities("ADアカウントと ad01")
    assert [(e.type, e.key) for e in found] == [("product", "active directory"), ("host", "ad01")]


def test_normalization_unifies_keys() -> None:
    wide = extract_entities("ＧＥＴ－ＡＤＵＳＥＲ と ＦＳ０１．ＣＯＲＰ．ＥＸＡＭＰＬＥ")
    assert [(e.type, e.key) for e in wide] == [
        ("command", "get-aduser"),
        ("host", "fs01.corp.example"),
    ]
    assert keys("サーバーの脆弱性スキャナー", "noun") == keys("サーバの脆弱性スキャナ", "noun")


def test_query_entities_match_index_keys() -> None:
    doc = extract_entities("ランサムウェア感染時は Microsoft Defender for Endpoint で隔離する。")
    query = extract_query_entities("ランサムウェアに感染したらMDEで何をする？")
    shared = {(e.key, e.type) for e in doc} & {(e.key, e.type) for e in query}
    assert shared == {("ランサムウェア", "noun"), ("microsoft defender for endpoint", "product")}


def test_empty_and_ascii_only() -> None:
    assert extract_entities("") == []
    assert extract_entities("   \n") == []
    assert [e.key for e in extract_entities("ping 8.8.8.8 from dc01")] == ["8.8.8.8", "dc01"]


def test_one_tokenizer_per_thread() -> None:
    results: list[list[Entity]] = []
    text = "フィッシングメールの証跡保全"

    def work() -> None:
        results.append(extract_entities(text))

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results) and len(results) == 3
