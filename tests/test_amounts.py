"""A question asking what something costs is answered only by a passage stating an amount."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.runbook_chat import ChatConfig, ask
from core.text.amounts import asks_for_amount, states_amount
from tests.conftest import make_settings


@pytest.mark.parametrize(
    "question",
    [
        "How much does the Business plan cost per user per month?",
        "How much will the forensic retainer charge us for an incident?",
        "What does an extra on-call seat cost?",
        "What is the price of the premium support contract?",
        "オンコール手当っていくら支給されるの？",
        "フォレンジック調査の料金はどのくらい？",
        "How expensive is the incident retainer?",
        "外部のフォレンジック調査の費用はどれくらいかかる？",
        "How much do we pay the retainer firm per incident?",
    ],
)
def test_questions_about_money(question):
    assert asks_for_amount(question)


@pytest.mark.parametrize(
    "question",
    [
        "How much access should I request for the admin console?",
        "How much time do we have to notify the regulator?",
        "Who pays attention to the status page?",
        "インシデント対応の費用対効果をどう説明する？",
        "コストを抑えてログを保管する手順は？",
        "How many people should join the incident call?",
        "What's the rate limit of the alerting API?",
        "How much attention should we pay to low-severity alerts?",
        "クラウドの料金アラートが鳴ったときの対応は？",
        "Which pricing tier includes the audit log?",
    ],
)
def test_questions_not_about_money(question):
    assert not asks_for_amount(question)


def test_amounts_in_passages():
    assert states_amount(["The plan is $49 per user per month."])
    assert states_amount(["待機1回につき 5,000円 を支給する。"])
    assert states_amount(["手当は3万円とする。"])
    assert states_amount(["Support is free of charge for customers."])
    assert states_amount(["Priced at USD 1,200 per year."])
    assert not states_amount(["The on-call engineer is paged within 5 minutes."])
    assert not states_amount(["手当の申請は翌月10日までに行う。"])


RUNBOOKS = {
    "oncall-allowance.md": """# オンコール手当の申請

## 申請手順

1. 待機した日付と時間帯を勤怠システムに入力する。
2. 夜間に呼び出された場合は、対応したインシデント番号を備考欄に記入する。
3. 上長が翌月5日までに承認する。

## 支給

手当は給与と同じ口座に、翌月の給与日にまとめて支給される。
""",
    "vpn-outage.md": """# VPN 障害対応

## 初動

1. VPN ゲートウェイの死活監視を確認する。
2. 認証サーバーのログで失敗の急増がないか確認する。
""",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("amounts")
    data = base / "runbooks"
    data.mkdir()
    for name, text in RUNBOOKS.items():
        (data / name).write_text(text, encoding="utf-8")
    return make_settings(base / "state", data), data


def _ask(question: str, settings, data: Path):
    return ask(question, [], ChatConfig(session_id="test", data=data), settings)


def test_a_price_question_over_a_runbook_without_amounts_is_refused_and_says_why(folder):
    settings, data = folder
    a = _ask("オンコール手当っていくら支給されるの？", settings, data)
    assert a.flags.insufficient_evidence
    assert a.citations and a.citations[0].file == "oncall-allowance.md"  # the right runbook …
    assert "金額の記載がありません" in a.answer  # … which states no amount
    assert a.evidence["amount_found"] is False


def test_the_same_runbook_answers_how_to_claim_it(folder):
    settings, data = folder
    a = _ask("オンコール手当はどうやって申請すればいい？", settings, data)
    assert not a.flags.insufficient_evidence, a.evidence
    assert a.citations[0].file == "oncall-allowance.md"
    assert a.evidence["amount_found"] is True


def test_a_runbook_stating_the_amount_answers_the_price_question(tmp_path: Path):
    data = tmp_path / "runbooks"
    data.mkdir()
    for name, text in RUNBOOKS.items():
        (data / name).write_text(text, encoding="utf-8")
    (data / "oncall-allowance.md").write_text(
        RUNBOOKS["oncall-allowance.md"]
        + "\n待機1日につき 3,000円、夜間の呼び出し1回につき 2,000円 を支給する。\n",
        encoding="utf-8",
    )
    settings = make_settings(tmp_path / "state", data)
    a = _ask("オンコール手当っていくら支給されるの？", settings, data)
    assert not a.flags.insufficient_evidence, a.evidence
    assert "3,000円" in a.answer
