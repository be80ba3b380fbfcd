"""A question about a name no runbook of the folder carries is refused, and says so: the
folder cannot answer about a tool, product or vendor it never mentions."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.retrieval.keyword import KeywordIndex
from core.retrieval.searcher import (
    FEWER_NAMES_WEIGHT,
    absent_identifiers,
    absent_names,
    named_documents,
    names_carried,
    prefer_named,
)
from core.runbook_chat import ChatConfig, ask, search_runbooks
from core.text.loanwords import LoanwordIndex
from core.text.tokenize import get_tokenizer
from tests.conftest import indexed_runbooks, make_settings

RUNBOOKS = {
    "tls-certificates.md": """# TLS 証明書の更新

## 更新手順

1. Let's Encrypt の証明書の有効期限を確認する。
2. 新しい証明書を取得し、nginx の設定で証明書ファイルのパスを差し替える。
3. nginx を再読み込みして、ブラウザで証明書の期限を確認する。
""",
    "bug-bounty.md": """# 脆弱性報奨金制度

## 報奨金の寄付

サイボウズは、報告者が希望する場合、報奨金を指定の団体に寄付する。
""",
    "backup.md": """# データベースのバックアップ

## 取得

pg_dump で毎晩ダンプを取得し、バックアップ用の S3 バケットへ保存する。
""",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory):
    return indexed_runbooks(tmp_path_factory.mktemp("absent"), RUNBOOKS)


def _ask(question: str, settings, data: Path):
    return ask(question, [], ChatConfig(session_id="test", data=data), settings)


def test_a_tool_the_folder_never_mentions_is_refused_and_named(folder):
    settings, data = folder
    a = _ask("Let's Encrypt の証明書を certbot で自動更新させる設定手順は？", settings, data)
    assert a.flags.insufficient_evidence
    assert "「certbot」は、どの手順書にも出てきません" in a.answer
    assert a.evidence["names_in_folder"] is False


def test_the_same_question_without_the_tool_is_answered(folder):
    settings, data = folder
    a = _ask("Let's Encrypt の証明書を更新する手順は？", settings, data)
    assert not a.flags.insufficient_evidence
    assert a.citations[0].file == "tls-certificates.md"
    assert a.evidence["names_in_folder"] is True


def _index(texts: list[str], keys: list[str] | None = None):
    tokenizer = get_tokenizer("janome")
    keys = keys or [str(i) for i in range(len(texts))]
    return KeywordIndex(keys, [tokenizer.tokenize(t) for t in texts]), tokenizer


def test_absent_names_reads_variants_katakana_and_leaves_identifiers_alone():
    texts = [*RUNBOOKS.values(), "GuardDuty の検出結果 PenTest:IAMUser/KaliLinux を確認する。"]
    keys = [f"{name}_0" for name in RUNBOOKS] + ["aws-eks-best-practices/incidents.md_0"]
    keyword, tokenizer = _index(texts, keys)
    loanwords = LoanwordIndex(texts)

    def absent(names: list[str], question: str) -> list[str]:
        return absent_names(names, question, keyword, tokenizer.tokenize, loanwords)

    assert absent(["certbot", "nginx"], "certbot と nginx の設定") == ["certbot"]
    # the vendor written in katakana in the folder
    assert absent(["Cybozu"], "Where does Cybozu send a donated bounty?") == []
    # a fragment of an identifier and an asker's hyphenated value are not looked up
    assert absent(["pg"], "pg_dump の世代は？") == []
    assert absent(["Prod-web"], "Prod-web のポリシーが止まらない") == []
    # a product's version is not required, its words are; a name of letters and digits is
    # looked up as it is
    assert absent(["Cloudflare R2"], "Cloudflare R2 に移したい") == ["Cloudflare R2"]
    assert absent(["S3", "EC2"], "S3 と EC2 のログは？") == ["EC2"]
    # inside a word of the folder, in a file's name, or nothing to look up (a stop word)
    assert absent(["Linux"], "Which findings point to pentest Linux distros?") == []
    assert absent(["EKS"], "EKS: what do we switch on?") == []
    assert absent(["My"], "「My IP」を選んでも接続できない") == []
    # acronyms joined by a slash are looked up as their parts; an asker's hostname is not
    assert absent(["KSK/ZSK", "TLS/S3"], "KSK/ZSK と TLS/S3") == ["KSK/ZSK"]
    assert absent(["prod-web-01"], "prod-web-01 のアラート") == []
    # a level written with a space in the folder ("PL 2"), a word of a phrase in a file's name
    levels, tok = _index(["Move from PL 1 to PL 2 carefully."], ["lpi-japan__dns-bind.md_0"])
    assert absent_names(["PL2"], "PL2 に上げたい", levels, tok.tokenize) == []
    glued, tok = _index(["A Lv3 incident is worse than a Lv2 one."])
    assert absent_names(["Lv3", "Lv2"], "Lv3 と Lv2 の違いは？", glued, tok.tokenize) == []
    assert absent_names(["LPI BIND"], "the LPI BIND exercise", levels, tok.tokenize) == []
    assert absent_names(["LPI Unbound"], "LPI Unbound", levels, tok.tokenize) == ["LPI Unbound"]
    # a name is looked up by its stem, as the index keeps its words ("Analytics", "Windows")
    stems, tok = _index(["Log Analytics keeps the Windows events."])
    assert absent_names(["Analytics", "Windows"], "Analytics と Windows", stems, tok.tokenize) == []


def test_settings_and_configuration_files_the_folder_never_writes_are_absent():
    keyword, tokenizer = _index(
        [*RUNBOOKS.values(), "postgresql.conf の autovacuum_naptime を 1min にする。"]
    )

    def absent(question: str) -> list[str]:
        return absent_identifiers(question, keyword, tokenizer.tokenize)

    assert absent("autovacuum_vacuum_scale_factor の既定値は？") == [
        "autovacuum_vacuum_scale_factor"
    ]
    assert absent("autovacuum_naptime はいくつにすべき？") == []
    assert absent("postgresql.conf と archives.json はどこ？") == ["archives.json"]
    assert absent("Sigma の value_count の書き方") == ["value_count"]
    # a command the folder writes, and words that are no settings
    assert absent("pg_dump の世代は？") == []
    assert absent("How do I restore it, i.e. roll back?") == []


def test_a_question_quoting_a_setting_no_runbook_writes_is_refused(folder):
    settings, data = folder
    a = _ask("nginx の ssl_stapling_verify はどう設定する？", settings, data)
    assert a.flags.insufficient_evidence
    assert "「ssl_stapling_verify」は、どの手順書にも出てきません" in a.answer


def test_a_vendor_page_is_named_by_its_folder(tmp_path: Path):
    # the product's own pages seldom repeat its name: the folder they are filed under says it
    data = tmp_path / "runbooks"
    (data / "tooly").mkdir(parents=True)
    (data / "tooly" / "snapshots.md").write_text(
        "# Base snapshots\n\n## Restoring a snapshot\n\n"
        "Restoring a snapshot creates a new base. Base-specific user permissions are not "
        "restored; the restored base inherits the workspace permissions.\n\n"
        "## Limits\n\nEach base can hold at most two snapshots at a time.\n",
        encoding="utf-8",
    )
    for name, text in RUNBOOKS.items():  # other runbooks of the folder
        (data / name).write_text(text, encoding="utf-8")
    settings = make_settings(tmp_path / "state", data)
    outcome = search_runbooks(settings, "Restoring a snapshot: are permissions kept?", data=data)
    snapshots = {h.chunk.doc_id for h in outcome.hits if h.chunk.source == "tooly/snapshots.md"}
    assert snapshots and snapshots <= named_documents(outcome.hits, ["Tooly"])
    assert not snapshots & named_documents(outcome.hits, ["Acmeflow"])
    # and the evidence grade reads the file's name as the search does
    a = _ask("How many snapshots can a Tooly base hold?", settings, data)
    assert a.citations[0].file == "tooly/snapshots.md"
    assert a.evidence["names_found"] is True


def test_of_two_guides_the_one_naming_more_of_the_question_s_names_comes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    settings, data = indexed_runbooks(
        tmp_path,
        {
            "router-wireguard.md": "# WireGuard server\n\n## Tunnel address\n\n"
            "The tunnel address of the WireGuard instance can be a /32 only for a single peer.\n",
            "firewall-wireguard.md": "# Road warrior setup\n\n## Configure the instance\n\n"
            "In OPNsense, the WireGuard instance takes a subnet such as 10.10.10.1/24.\n",
        },
    )
    names = ["OPNsense", "WireGuard"]
    question = "Can the tunnel address of the OPNsense WireGuard instance be a /32?"
    hits = search_runbooks(settings, question, data=data).hits
    carried = names_carried(hits, names)
    assert {h.chunk.source: carried[h.chunk.doc_id] for h in hits} == {
        "firewall-wireguard.md": 2,
        "router-wireguard.md": 1,
    }

    def ranked(weight: float) -> list[str]:
        # the router's page a little ahead, as the search may put it
        for h in hits:
            h.combined = 1.0 if h.chunk.source == "router-wireguard.md" else 0.9
        monkeypatch.setattr("core.retrieval.searcher.FEWER_NAMES_WEIGHT", weight)
        prefer_named(hits, names)
        return [h.chunk.source for h in hits]

    assert ranked(FEWER_NAMES_WEIGHT)[0] == "firewall-wireguard.md"
    assert ranked(1.0)[0] == "router-wireguard.md"  # no preference: the search's order
