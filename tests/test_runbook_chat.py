"""The runbook chat pipeline over the indexed sample runbooks: flags, templates, modes, audit."""

from __future__ import annotations

import json

import pytest

from core import guardrails
from core.audit import log_path, read_records
from core.audit_verify import verify_file
from core.runbook_chat import (
    ChatConfig,
    Exchange,
    ask,
    open_section,
    rewrite_follow_up,
)
from tests.conftest import make_settings
from tests.support.openai_server import OpenAIStub


def todays_records(settings):
    from datetime import datetime

    records, bad = read_records(log_path(settings.logs_dir, datetime.now().astimezone().date()))
    assert bad == 0
    return records


def cfg(**kw) -> ChatConfig:
    return ChatConfig(session_id="test", **kw)


def test_normal_question_gets_an_extractive_cited_answer(sample_settings):
    a = ask("ランサムウェアに感染した端末をどう隔離しますか", [], cfg(), sample_settings)
    assert a.answer_mode == "extractive"
    assert not any(a.flags.model_dump().values()) or a.flags.dangerous_operation
    assert "[1]" in a.answer
    cited = [c for c in a.citations if c.cited]
    assert cited and cited[0].file == "ransomware-isolation.md"
    assert all(len(c.excerpt) <= 200 for c in a.citations)
    assert a.evidence["probability"] >= guardrails.EVIDENCE_THRESHOLD
    # numbered steps keep their order
    steps = [line for line in a.answer.splitlines() if line[:2].rstrip(".").isdigit()]
    numbers = [int(line.split(".")[0]) for line in steps]
    assert numbers == sorted(numbers)


def test_unrelated_question_is_refused_without_generation(sample_settings):
    a = ask("カレーライスの作り方を教えて", [], cfg(), sample_settings)
    assert a.flags.insufficient_evidence and a.answer_mode == "template"
    assert a.answer == guardrails.INSUFFICIENT_EVIDENCE_TEMPLATE
    assert a.answer.startswith("該当する手順が見つかりませんでした。")


@pytest.mark.parametrize("question", ["何", "どうすればいい？", "なぜ"])
def test_vague_question_gets_the_clarification_template(sample_settings, question):
    a = ask(question, [], cfg(), sample_settings)
    assert a.flags.ambiguous_query and a.answer == guardrails.AMBIGUOUS_TEMPLATE
    assert "例：「ログインできない」" in a.answer


def test_a_symptom_gets_the_steps_not_the_purpose(sample_settings):
    a = ask("VPN に接続できない", [], cfg(), sample_settings)
    assert a.answer_mode == "extractive"
    head = a.answer.splitlines()[0]
    assert "VPN" in head and "目的" not in head and "適用範囲" not in head
    # what to do: numbered steps or the criteria that say whom to hand over to
    assert any(line.startswith(("1. ", "- ")) for line in a.answer.splitlines()[1:])
    assert "切り分ける" not in a.answer  # the 目的 sentence of the VPN runbook


def test_criteria_and_contacts_questions_get_their_sections(sample_settings):
    criteria = ask(
        "VPN の障害をネットワーク運用チームへ引き渡す判断基準は", [], cfg(), sample_settings
    )
    assert "判断基準" in criteria.answer.splitlines()[0]
    contacts = ask("ネットワーク運用チームの連絡先は", [], cfg(), sample_settings)
    assert "連絡先" in contacts.answer.splitlines()[0]
    assert "noc@example.jp" in contacts.answer


def test_nested_items_under_a_step_stay_nested(sample_settings):
    a = ask("VPN で Invalid token エラーが出る原因", [], cfg(), sample_settings)
    lines = a.answer.splitlines()
    nested = [line for line in lines if line.startswith("   - ")]
    assert any("FortiToken" in line for line in nested)


def test_dangerous_question_gets_the_banner_and_still_an_answer(sample_settings):
    a = ask("証跡のイベントログを消去してもよいですか", [], cfg(), sample_settings)
    assert a.flags.dangerous_operation and a.banner == "⚠️ 承認・確認が必要"
    assert a.display_text().startswith("⚠️ 承認・確認が必要")
    assert a.answer_mode == "extractive" and a.citations


def test_follow_up_is_rewritten_from_history_and_logged(sample_settings):
    first = ask("VPN にログインできない利用者への対応", [], cfg(), sample_settings)
    history = [Exchange(first.question, first.answer, first.question)]
    assert rewrite_follow_up("その手順の詳細を教えて", history) is not None
    assert rewrite_follow_up("ありがとう。それでは、上記の手順の次は？", history) is not None
    assert rewrite_follow_up("もっと詳しく", history) is not None
    # a question naming its subject before it refers to it stands alone
    alone = "SIEM に上がる自分の操作のログ、その行だけ消す方法はある？"
    assert rewrite_follow_up(alone, history) is None
    second = ask("その手順の詳細を教えて", history, cfg(), sample_settings)
    assert second.rewritten_query and "VPN" in second.rewritten_query
    assert not second.flags.ambiguous_query
    assert any(c.file == "vpn-login-failure.md" for c in second.citations if c.cited)
    logged = [r for r in todays_records(sample_settings) if r["query"] == "その手順の詳細を教えて"]
    assert logged and "VPN" in logged[-1]["rewritten_query"]


def test_audit_record_has_the_design_fields(sample_settings):
    a = ask("DDoS 攻撃を受けたときの緩和策", [], cfg(k=3, bm25_weight=0.5), sample_settings)
    assert a.audit_logged
    record = todays_records(sample_settings)[-1]
    for key in (
        "timestamp", "session_id", "query", "search_results", "answer", "processing_time_sec",
        "token_usage", "cost_usd", "search_config", "flags", "answer_mode", "prev_hash", "hash",
    ):  # fmt: skip
        assert key in record, key
    assert record["search_config"] == {
        "k": 3, "bm25_weight": 0.5, "vector_weight": 0.5, "fusion": "weighted", "data": None
    }  # fmt: skip
    assert {
        "chunk_id",
        "score",
        "bm25_score",
        "vector_score",
        "file",
        "heading",
        "excerpt",
        "doc_hash",
    } <= set(record["search_results"][0])
    assert record["answer_mode"] == "extractive"
    assert verify_file(log_path(sample_settings.logs_dir, __import__("datetime").date.today())).ok


def test_pii_in_the_question_is_masked_in_the_log(sample_settings):
    ask("taro@corp.example.jp から届いたフィッシングメールの報告対応", [], cfg(), sample_settings)
    raw = json.dumps(todays_records(sample_settings)[-1], ensure_ascii=False)
    assert "taro@corp.example.jp" not in raw and "[EMAIL]" in raw


def test_llm_mode_retries_logs_usage_and_removes_invented_refs(sample_state):
    with OpenAIStub() as stub:
        stub.queue(status=500)
        stub.queue(
            content="1. EDR で端末を隔離する [1]\n2. 責任者に報告する [7]",
            prompt_tokens=900,
            completion_tokens=100,
        )
        settings = make_settings(
            sample_state,
            openai_base_url=stub.base_url,
            openai_api_key="test-key",
            chat_model="gpt-4o-mini",
        )
        a = ask("ランサムウェア感染端末の隔離手順", [], cfg(), settings)
        requests = stub.chat_requests()
    assert a.answer_mode == "llm"
    assert len(requests) == 2  # the 500 was retried inside the budget
    prompt = requests[-1]["messages"][-1]["content"]
    assert (
        "コンテキスト" in prompt
        and "<<<CONTEXT 1 " in prompt
        and "<<<END CONTEXT 1>>>" in prompt
        and "ランサムウェア感染端末の隔離手順" in prompt
    )
    assert "[7]" not in a.answer and "[1]" in a.answer
    assert any("7" in w for w in a.warnings)
    assert a.token_usage["total_tokens"] == 1000
    assert a.cost_usd == pytest.approx((900 * 0.15 + 100 * 0.60) / 1e6)
    record = todays_records(settings)[-1]
    assert record["answer_mode"] == "llm" and record["token_usage"]["prompt_tokens"] == 900
    assert record["cost_usd"] > 0


def test_llm_failure_after_retries_falls_back_with_a_warning(sample_state):
    with OpenAIStub() as stub:
        for _ in range(4):
            stub.queue(status=500)
        settings = make_settings(
            sample_state, openai_base_url=stub.base_url, openai_api_key="k", llm_max_retries=3
        )
        a = ask("VPN にログインできない", [], cfg(), settings)
        assert len(stub.chat_requests()) == 4
    assert a.answer_mode == "extractive"
    assert any("HTTP 500" in w and "抽出型回答" in w for w in a.warnings)
    assert a.llm_calls[0].outcome == "fallback" and a.llm_calls[0].attempts == 4


def test_missing_folder_is_a_message_not_a_crash(sample_settings, tmp_path):
    a = ask("VPN の手順", [], cfg(data=tmp_path / "nothing"), sample_settings)
    assert a.answer_mode == "template" and "見つかりません" in a.answer


def test_citation_stays_pinned_after_the_document_changes(settings, runbook_dir):
    (runbook_dir / "vpn.md").write_text(
        "# VPN 障害\n\n## 手順\n1. FortiGate のログを確認する。\n2. 証明書の期限を確認する。\n",
        encoding="utf-8",
    )
    a = ask("FortiGate のログを確認する手順", [], cfg(data=runbook_dir), settings)
    c = next(c for c in a.citations if c.cited)
    (runbook_dir / "vpn.md").write_text(
        "# VPN 障害\n\n## 手順\n1. 新しい手順に変わった。\n", encoding="utf-8"
    )
    from core.runbooks import index_runbooks

    index_runbooks(settings, runbook_dir, check_allowed=False)
    view = open_section(settings, runbook_dir, c.chunk_id, c.file, c.doc_hash)
    assert view.changed and not view.removed
    assert view.text is not None and "FortiGate" in view.text


def test_script_in_a_runbook_is_escaped(settings, runbook_dir):
    from core.generation.citations import highlight_html

    (runbook_dir / "xss.md").write_text(
        # Raw HTML tags are reduced to their text when Markdown is read; markup written as code
        # or as entities reaches the indexed text as it is, and must be escaped when shown.
        "# 検証用手順\n\n## 手順\n1. `<script>alert('x')</script>` と"
        " &lt;img src=x onerror=alert(1)&gt; を含む手順を確認する。\n",
        encoding="utf-8",
    )
    a = ask("検証用手順を確認する", [], cfg(data=runbook_dir), settings)
    c = a.citations[0]
    rendered = highlight_html(c.text, a.query_terms)
    assert "<script>" not in rendered and "&lt;script&gt;" in rendered
    assert "<img" not in rendered


def cited_numbers(a) -> tuple[list[int], list[int]]:
    from core.generation.citations import markers_in

    return sorted(int(m) for m in markers_in(a.answer)), sorted(c.n for c in a.citations if c.cited)


@pytest.mark.parametrize(
    "question",
    ["VPN にログインできない利用者への対応", "ランサムウェアに感染した端末をどう隔離しますか"],
)
def test_citations_are_numbered_per_answer_without_gaps(sample_settings, question):
    a = ask(question, [], cfg(write_audit=False), sample_settings)
    in_text, in_list = cited_numbers(a)
    assert in_text and in_text == in_list == list(range(1, len(in_text) + 1))
    assert [c.n for c in a.citations] == list(range(1, len(a.citations) + 1))
    follow = ask(
        "その詳細は？",
        [Exchange(a.question, a.answer, a.question)],
        cfg(write_audit=False),
        sample_settings,
    )
    in_text, in_list = cited_numbers(follow)
    assert in_text and in_text == in_list == list(range(1, len(in_text) + 1))


def test_follow_up_gives_more_than_the_first_answer(sample_settings):
    from core.generation.citations import MARKER_RE

    def lines(text: str) -> set[str]:
        return {
            " ".join(MARKER_RE.sub("", line).split()).lstrip("- ")
            for line in text.splitlines()
            if MARKER_RE.search(line) and not line.rstrip().endswith(":")
        }

    first = ask("VPN にログインできない利用者への対応", [], cfg(write_audit=False), sample_settings)
    second = ask(
        "その詳細は？",
        [Exchange(first.question, first.answer, first.question)],
        cfg(write_audit=False),
        sample_settings,
    )
    assert second.rewritten_query and not second.flags.insufficient_evidence
    said, new = lines(first.answer), lines(second.answer)
    assert new and len(new & said) <= len(new) // 2, (first.answer, second.answer)


def test_a_folder_is_one_index_however_it_is_named(tmp_path):
    """`--data DIR` and `WB_RUNBOOKS_DIR=DIR` name the same folder: one index, built once."""
    from core.runbooks import index_runbooks, runbook_corpus, runbook_index_spec
    from core.status import workbench_status
    from tests.ingest.test_indexer import RUNBOOK_A

    books = tmp_path / "books"
    books.mkdir()
    (books / "vpn.md").write_text(RUNBOOK_A, encoding="utf-8")
    by_env = make_settings(tmp_path / "state", books)  # WB_RUNBOOKS_DIR=DIR
    by_flag = make_settings(tmp_path / "state")  # --data DIR, samples configured
    index_runbooks(by_env, None)
    for settings, data in ((by_env, None), (by_flag, books), (by_flag, str(books) + "/")):
        spec = runbook_index_spec(settings, runbook_corpus(settings, data).spec.source_dir)
        assert spec.name == runbook_index_spec(by_env).name
        assert runbook_corpus(settings, data).store.manifest(), (settings.runbooks_dir, data)
    again = index_runbooks(by_flag, books, check_allowed=False)
    assert not again.added and not again.updated  # nothing rebuilt
    status = workbench_status(by_env).indexes[0]
    assert status.built and status.name == runbook_index_spec(by_env).name
    # the shipped samples keep the plain name
    assert runbook_index_spec(by_flag).name == "runbooks"


# One playbook about one thing: "ransomware" and "contain" are in most of its sections, so its
# BM25 inverse document frequencies are small and a question about it scores under 1.
ONE_PLAYBOOK = """# Ransomware Response Playbook

## 1. Scope

This playbook covers ransomware on company laptops and file servers. Ransomware encrypts files
and asks for a payment; this playbook never recommends paying.

## 2. Detection

Ransomware is reported by the EDR console, by users who see a ransom note, or by file servers
whose files change extension in bulk. Confirm the ransomware alert in the EDR console first.

## 3. Containment

To contain ransomware, isolate the infected laptop from the network with the EDR console's
network containment. Disable the file share the ransomware was writing to. Do not power off the
laptop: memory holds the keys that may decrypt the files.

## 4. Evidence

Before recovery, capture memory from the contained laptop and copy the ransom note. Record the
time of every containment step in the ticket.

## 5. Eradication

Remove the ransomware binary and its scheduled tasks. Reset the passwords of the accounts the
ransomware used to spread.

## 6. Recovery

Restore files from the last clean backup of the file server. Check the restored files before
users return to them.

## 7. Communication

Tell the CISO within one hour of a confirmed ransomware infection. Legal decides about
notifying customers.

## 8. Lessons learned

Within a week of recovery, hold a review of the ransomware incident and update this playbook.
"""


def test_a_folder_of_one_playbook_answers_what_it_covers(tmp_path):
    """Over a single runbook the raw BM25 of its own topic is small (its words are in every
    section): a question whose terms the passages all hold is not read as weak keyword
    evidence. What the playbook does not cover is still refused."""
    books = tmp_path / "books"
    books.mkdir()
    (books / "ransomware.md").write_text(ONE_PLAYBOOK, encoding="utf-8")
    settings = make_settings(tmp_path / "state", books)
    answered = ask("How do we contain ransomware?", [], cfg(data=books), settings)
    assert not answered.flags.insufficient_evidence, answered.evidence
    assert "isolate the infected laptop" in answered.answer
    assert answered.evidence["bm25"] == guardrails.BM25_PRIOR  # the raw score was under it
    refused = ask("How do I rotate the etcd TLS certificates?", [], cfg(data=books), settings)
    assert refused.flags.insufficient_evidence, refused.evidence


def test_the_graded_bm25_over_few_passages_or_few_runbooks():
    many = [0.9] * 20
    prior = guardrails.BM25_PRIOR
    assert guardrails.graded_bm25(0.5, [0.9, 0.8], documents=40, share=0.1) == prior
    # one or two runbooks: at least the prior times the share of the terms found, squared
    assert guardrails.graded_bm25(0.9, many, documents=1, share=1.0) == prior
    assert guardrails.graded_bm25(0.9, many, documents=2, share=0.5) == prior * 0.25
    assert guardrails.graded_bm25(7.0, many, documents=1, share=1.0) == 7.0
    assert guardrails.graded_bm25(0.9, many, documents=1, share=None) == 0.9
    # a library, or a search that did not count its documents: the raw score
    assert guardrails.graded_bm25(0.9, many, documents=guardrails.FEW_DOCUMENTS, share=1.0) == 0.9
    assert guardrails.graded_bm25(0.9, many, documents=0, share=1.0) == 0.9
