"""Guardrails: ambiguity, dangerous operations, evidence grading."""

import pytest

from core import guardrails
from core.text.tokenize import get_tokenizer

TOK = get_tokenizer("janome")


@pytest.mark.parametrize(
    "question",
    [
        "何",
        "どう？",
        "なぜですか",
        "どうすればいい？",
        "教えて",
        "方法を教えてください",
        "これは何",
    ],
)
def test_ambiguous(question):
    assert guardrails.detect_ambiguous_query(question, TOK)


@pytest.mark.parametrize(
    "question",
    [
        "VPN に接続できない",
        "ランサムウェアの隔離手順",
        "AD ロックアウトの確認方法",
        "DDoS の緩和策は？",
        "CVE-2024-3400 の対応",
    ],
)
def test_specific(question):
    assert not guardrails.detect_ambiguous_query(question, TOK)


@pytest.mark.parametrize(
    ("question", "answer", "expected"),
    [
        ("ログを削除してよいか", "", True),
        ("Delete the user", "", True),
        ("DISABLE the account", "", True),
        ("手順を教えて", "`rm -rf /tmp/work` を実行する", True),
        ("", "DROP TABLE users; を実行", True),
        ("", "format C: で初期化する", True),
        ("", "Remove-Item -Path C:\\x -Recurse", True),
        ("", "shutdown /s /t 0", True),
        ("VPN の確認手順", "FortiGate のログを確認する。", False),
        ("フィッシングメールの報告", "ヘッダーを確認する。", False),
    ],
)
def test_dangerous(question, answer, expected):
    report = guardrails.detect_dangerous_operations(question, answer)
    assert report.dangerous is expected
    if expected:
        assert report.where


def test_dangerous_reports_where():
    report = guardrails.detect_dangerous_operations("確認したい", "サービスを停止する")
    assert report.where == ("answer",) and "停止" in report.matched


def test_evidence_grade_is_monotonic_and_thresholded():
    low = guardrails.grade_evidence(0.82, 0.2, 1.0)
    high = guardrails.grade_evidence(0.91, 0.9, 8.0)
    assert not low.sufficient and high.sufficient
    assert (
        guardrails.grade_evidence(0.86, 0.5, 3.0).probability
        < guardrails.grade_evidence(0.88, 0.5, 3.0).probability
    )
    assert guardrails.term_coverage(["vpn", "接続"], [("vpn",), ("ログ",)]) == 0.5
    assert guardrails.term_coverage([], [("vpn",)]) == 0.0
