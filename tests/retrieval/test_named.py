"""A question about a named product wants the passages that name it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.retrieval import searcher
from core.runbooks import index_runbooks, search_runbooks

# Written for this test: a general isolation runbook, and a tools page that names the product.
GENERAL = """# 感染端末の隔離手順

## 隔離

1. 感染が疑われる端末をネットワークから隔離する。
2. 端末の電源は切らずに、利用者に操作しないよう伝える。
3. 隔離した時刻と端末名をチケットに記録する。
"""
TOOLS = """# セキュリティ製品の一覧

## 製品

- 資産管理: 社内の台帳システム
- メール: クラウドのメールゲートウェイ

## 端末の管理

CrowdStrike Falcon のコンソールでホストを選び、「ネットワーク封じ込め」を実行すると通信が遮断される。
"""


@pytest.fixture
def folder(settings, runbook_dir: Path):
    (runbook_dir / "isolation.md").write_text(GENERAL, encoding="utf-8")
    (runbook_dir / "tools.md").write_text(TOOLS, encoding="utf-8")
    index_runbooks(settings, runbook_dir, check_allowed=False)
    return settings, runbook_dir


QUESTION = "CrowdStrike Falcon で感染端末をネットワークから隔離する手順"


def _top(settings, folder: Path, question: str = QUESTION) -> str:
    return search_runbooks(settings, question, data=folder).hits[0].chunk.source


def test_the_passage_naming_the_product_comes_first(folder, monkeypatch):
    settings, data = folder
    assert _top(settings, data) == "tools.md"
    monkeypatch.setattr(searcher, "NAMED_MISS_WEIGHT", 1.0)  # the fixture exercises the rule
    assert _top(settings, data) == "isolation.md"


def test_questions_without_names_keep_the_fused_order(folder):
    settings, data = folder
    assert _top(settings, data, "感染端末をネットワークから隔離する手順") == "isolation.md"


def test_the_extractive_answer_quotes_the_runbook_that_names_the_product(folder):
    from core.runbook_chat import ChatConfig, ask

    settings, data = folder
    answer = ask(QUESTION, [], ChatConfig(session_id="t", data=data), settings)
    assert not answer.flags.insufficient_evidence, answer.evidence
    quoted = {c.file for c in answer.citations if c.cited}
    assert quoted == {"tools.md"}, answer.answer
    assert "ネットワーク封じ込め" in answer.answer


def _hit(source: str, title: str, score: float):
    from types import SimpleNamespace

    chunk = SimpleNamespace(doc_id=source, source=source, title=title, chunk_id=source)
    return SimpleNamespace(chunk=chunk, combined=score)


@pytest.mark.parametrize(
    ("question", "referred"),
    [
        ("What does the SOC metrics note recommend about false positives?", "soc-metrics.pdf"),
        ("In the PPC guideline controls table, who owns the row?", "controls-ppc-guideline.md"),
        ("ウイルス対策の管理策一覧で、初動の行の担当は？", "virus-controls.docx"),
        ("What does the post-mortem template ask for?", "post-mortem-template.md"),
    ],
)
def test_a_document_referred_to_by_its_name_comes_first(question, referred):
    from core.text.tokenize import get_tokenizer

    hits = [
        _hit("sigma-filters.md", "Sigma Filters Specification", 0.60),
        _hit("points-ppc-guideline.md", "PPC ガイドラインの要点", 0.59),
        _hit("post-mortems.md", "Post-mortems", 0.58),
        _hit("virus-controls.docx", "ウイルス対策 管理策一覧", 0.57),
        _hit("controls-ppc-guideline.md", "PPC ガイドライン 管理策", 0.56),
        _hit("post-mortem-template.md", "Template", 0.55),
        _hit("soc-metrics.pdf", "SOC指標", 0.54),
    ]
    tokenize = get_tokenizer("janome").tokenize
    assert searcher.referred_documents(hits, question, tokenize) == {referred}
    searcher.prefer_referred(hits, question, tokenize)
    assert hits[0].chunk.source == referred


@pytest.mark.parametrize(
    "question",
    [
        "How do we count false positives?",  # no document named
        "What does the incident response plan say about escalation?",  # every plan is one
        "CrowdStrike Falcon で感染端末をネットワークから隔離する手順",  # a topic, not a name
    ],
)
def test_no_document_is_referred_to_without_a_unique_name(question):
    from core.text.tokenize import get_tokenizer

    hits = [
        _hit("ir-plan-aws.md", "Incident Response Plan (AWS)", 0.9),
        _hit("ir-plan-gcp.md", "Incident Response Plan (GCP)", 0.8),
        _hit("isolation.md", "感染端末の隔離手順", 0.7),
        _hit("false-positives.md", "Counting", 0.6),
    ]
    tokenize = get_tokenizer("janome").tokenize
    assert searcher.referred_documents(hits, question, tokenize) == set()


def test_a_name_is_read_in_a_file_name_written_without_separators():
    from types import SimpleNamespace

    def hit(source: str):
        chunk = SimpleNamespace(
            title="設定", text="ホワイトリストのエントリーを削除する。", source=source
        )
        return SimpleNamespace(chunk=chunk)

    page = hit("IBM-Docs__ComposeForPostgreSQL__dashboard-settings.md")
    assert searcher.missing_in_passages(["Compose PostgreSQL"], [page]) == []
    assert searcher.missing_in_passages(["Compose for PostgreSQL"], [page]) == []
    assert searcher.missing_in_passages(["Postgres"], [page]) == []  # its other name
    # a short name is a part of its own: "ES" is not the "es" of "settings"
    assert searcher.missing_in_passages(["ES"], [page]) == ["ES"]
    assert searcher.missing_in_passages(["EKS"], [hit("aws-eks-best-practices/x.md")]) == []


def test_the_name_is_the_noun_phrase_before_the_document_noun():
    """From the Defender for Cloud page: a screen of the product is named, not a page whose
    title shares the question's other words (JIT, VM)."""
    from core.text.tokenize import get_tokenizer

    hits = [
        _hit("jit-usage.pdf", "Just-In-Time アクセスを使用して管理ポートを保護する", 0.6),
        _hit("jit-overview.md", "Understanding just-in-time (JIT) VM access", 0.5),
        _hit("alert-validation.md", "Microsoft Defender for Cloud でのアラートの検証", 0.4),
    ]
    question = "When I turn on JIT for a VM from the Defender for Cloud page, which ports?"
    tokenize = get_tokenizer("janome").tokenize
    assert searcher.referred_documents(hits, question, tokenize) == set()
